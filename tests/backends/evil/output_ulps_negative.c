/* Declares output_ulps = -0.5 (below the 0..4 range; a negative tolerance) with a correct backend.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-output-ulps-negative", "1.0", "spec",
                                     {POOLSPEC_F64, 1, -0.5, 0}, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
