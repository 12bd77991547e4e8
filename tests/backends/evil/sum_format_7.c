/* Declares sum_format = 7 (no such format; a table lookup by it would read out of bounds), garbage out.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-sum-format-7", "1.0", "spec",
                                     {7, 1, 1.0, 0}, NULL, minimal_supports, evil_garbage_run, NULL};
  return index == 0 ? &b : NULL;
}
