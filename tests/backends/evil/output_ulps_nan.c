/* Declares output_ulps = NaN (every comparison with it is false) and outputs garbage.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-output-ulps-nan", "1.0", "spec",
                                     {POOLSPEC_F64, 1, NAN, 0}, NULL, minimal_supports, evil_garbage_run, NULL};
  return index == 0 ? &b : NULL;
}
