/* A backend whose run is NULL (supports says yes to everything minimal does).
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-run-null", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, NULL, NULL};
  return index == 0 ? &b : NULL;
}
