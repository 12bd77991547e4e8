/* Declares extra_operations = 1e9 (with f32 sums n*u >> 1: gamma blows up or turns negative), garbage out.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-extra-ops-huge", "1.0", "spec",
                                     {POOLSPEC_F32, 1000000000, 1.0, 0}, NULL, minimal_supports, evil_garbage_run,
                                     NULL};
  return index == 0 ? &b : NULL;
}
