/* run stops its own process (raise(SIGSTOP)): a stopped worker uses no CPU and never answers.
 * If it is continued (or cannot be stopped, as a PID-namespace init) it sleeps forever instead.
 * expect: HANG|CRASH
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 * also: --no-pid-namespace
 */
#include <signal.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)p, (void)in, (void)out, (void)indices, (void)message, (void)size;
  raise(SIGSTOP);
  for (;;) pause();
  return 0; /* not reached */
}

EVIL_ENTRY("evil-sigstop", minimal_supports, run)
