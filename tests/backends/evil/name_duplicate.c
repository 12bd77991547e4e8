/* Two correct backends with the same name, "evil-twin".
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend twins[] = {
      {POOLSPEC_BACKEND_ABI_VERSION, "evil-twin", "1.0", "spec", EVIL_ACCUMULATION, NULL, minimal_supports,
       minimal_run, NULL},
      {POOLSPEC_BACKEND_ABI_VERSION, "evil-twin", "2.0", "spec", EVIL_ACCUMULATION, NULL, minimal_supports,
       minimal_run, NULL}};
  return index < 2 ? &twins[index] : NULL;
}
