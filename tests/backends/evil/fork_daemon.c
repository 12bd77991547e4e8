/* On its first call run forks; the child setsid()s and forks again, and the grandchild sleeps forever
 * holding stdout, stderr and every inherited fd. The worker computes correctly. Nothing may survive.
 * expect: PASS
 * also: --no-pid-namespace
 */
/* The grandchild ignores TERM/HUP/INT and keeps the certifier's channel open too. */
#include <signal.h>
#include <sys/wait.h>

#include "evil.h"

static int forked;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (!forked) {
    forked = 1;
    const pid_t child = fork();
    if (child == 0) {
      setsid();
      if (fork() == 0) {
        signal(SIGTERM, SIG_IGN), signal(SIGHUP, SIG_IGN), signal(SIGINT, SIG_IGN);
        for (;;) pause();
      }
      _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-fork-daemon", minimal_supports, run)
