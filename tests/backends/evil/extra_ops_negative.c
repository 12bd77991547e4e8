/* Declares extra_operations = -5 (gamma(K - 5) is negative or zero for small windows), garbage out.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-extra-ops-negative", "1.0", "spec",
                                     {POOLSPEC_F64, -5, 1.0, 0}, NULL, minimal_supports, evil_garbage_run, NULL};
  return index == 0 ? &b : NULL;
}
