/* The loosest valid declaration (f32 sums, 16 extra operations, 4 ulps, 1 integer unit) on a correct
 * backend: the limits are inclusive, so this must not be refused.
 * expect: PASS
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-accumulation-max-valid", "1.0", "spec",
                                     {POOLSPEC_F32, 16, 4.0, 1}, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
