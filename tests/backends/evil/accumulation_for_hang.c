/* accumulation_for never returns (sleeps in pause()); supports and run are correct.
 * expect: HANG|LOAD-ERROR
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max --load-timeout-ms 2000
 */
#include "evil.h"

static void hang(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self, (void)p, (void)out;
  for (;;) pause();
}

EVIL_ENTRY_WITH("evil-accumulation-for-hang", hang, minimal_supports, minimal_run)
