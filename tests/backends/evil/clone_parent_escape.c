/* On its first call run clone()s with CLONE_PARENT (the new process is the worker's sibling, not
 * its child), which setsid()s and sleeps forever; the worker computes correctly. Nothing may survive.
 * expect: PASS
 * also: --no-pid-namespace
 */
/* The sibling ignores TERM/HUP/INT. A PID-namespace init may not use CLONE_PARENT; then nothing is
 * started and the backend is simply correct. */
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include "evil.h"

static int escaped;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (!escaped) {
    escaped = 1;
    if (syscall(SYS_clone, (long)(CLONE_PARENT | SIGCHLD), 0L, 0L, 0L, 0L) == 0) {
      syscall(SYS_setsid);
      signal(SIGTERM, SIG_IGN), signal(SIGHUP, SIG_IGN), signal(SIGINT, SIG_IGN);
      for (;;) pause();
    }
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-clone-parent-escape", minimal_supports, run)
