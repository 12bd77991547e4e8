/* Declares integer_units = INT64_MAX (any int8 average "within tolerance") and outputs garbage.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-integer-units-max", "1.0", "spec",
                                     {POOLSPEC_F64, 1, 1.0, INT64_MAX}, NULL, minimal_supports, evil_garbage_run,
                                     NULL};
  return index == 0 ? &b : NULL;
}
