/* The entry returns NULL for index 0 (so the library declares no backend) though index 1 would
 * give a correct one: a library with no backends is refused.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-entry-null-first", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  return index == 1 ? &b : NULL;
}
