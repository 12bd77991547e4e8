/* supports never returns (sleeps in pause()); the wall-clock limit must cover supports too.
 * expect: HANG
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 */
#include "evil.h"

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self, (void)p, (void)reason, (void)size;
  for (;;) pause();
  return 0; /* not reached */
}

EVIL_ENTRY("evil-supports-hang", supports, minimal_run)
