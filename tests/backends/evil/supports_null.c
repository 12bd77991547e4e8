/* A backend whose supports is NULL (run is correct).
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-supports-null", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, NULL, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
