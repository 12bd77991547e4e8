/* accumulation_for never returns (sleeps in pause()); supports and run are correct.
 * expect: HANG|LOAD-ERROR
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max --load-timeout-ms 2000
 */
#include "evil.h"

static void hang(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self, (void)p, (void)out;
  for (;;) pause();
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-accumulation-for-hang", "1.0", "spec",
                                     EVIL_ACCUMULATION, hang, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
