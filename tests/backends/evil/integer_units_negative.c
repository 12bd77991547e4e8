/* Declares integer_units = -1 (a negative integer tolerance) with a correct backend.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-integer-units-negative", "1.0", "spec",
                                     {POOLSPEC_F64, 1, 1.0, -1}, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
