/* Declares sum_format = POOLSPEC_F16: a real dtype, but not one of EXACT/F32/F64 (u = 2^-11 would
 * give a huge tolerance); garbage out.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-sum-format-f16", "1.0", "spec",
                                     {POOLSPEC_F16, 1, 1.0, 0}, NULL, minimal_supports, evil_garbage_run, NULL};
  return index == 0 ? &b : NULL;
}
