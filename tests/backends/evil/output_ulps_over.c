/* Declares output_ulps = 4.5, just past the 0..4 limit, with a correct backend.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-output-ulps-over", "1.0", "spec",
                                     {POOLSPEC_F64, 1, 4.5, 0}, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
