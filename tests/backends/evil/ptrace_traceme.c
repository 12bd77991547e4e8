/* On its first call run makes its parent its tracer (PTRACE_TRACEME) and raises SIGUSR1: the
 * parent's waitpid now reports a stop, and the worker stays stopped until the parent acts.
 * expect: HANG|CRASH
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 * also: --no-pid-namespace
 */
/* SIGUSR1 has a handler, so even a PID-namespace init takes it. If PTRACE_TRACEME is refused the
 * worker sleeps forever instead. */
#include <signal.h>
#include <sys/ptrace.h>

#include "evil.h"

static void ignore(int sig) { (void)sig; }

static int traced;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  if (!traced) {
    traced = 1;
    signal(SIGUSR1, ignore);
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
      for (;;) pause();
    raise(SIGUSR1);
  }
  return r;
}

EVIL_ENTRY("evil-ptrace-traceme", minimal_supports, run)
