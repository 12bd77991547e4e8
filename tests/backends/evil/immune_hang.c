/* run lifts its CPU and file-size limits (root can), ignores and blocks every catchable signal,
 * cancels timers and alarms, holds the stdio locks, and busy-loops: only SIGKILL from outside ends it.
 * expect: HANG
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)p, (void)in, (void)out, (void)indices, (void)message, (void)size;
  const struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_CPU, &unlimited), setrlimit(RLIMIT_FSIZE, &unlimited);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_IGN);
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  const struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL), setitimer(ITIMER_VIRTUAL, &off, NULL), setitimer(ITIMER_PROF, &off, NULL);
  alarm(0);
  flockfile(stdout), flockfile(stderr);
  for (volatile unsigned long spin = 0;; ++spin) {
  }
  return 0; /* not reached */
}

EVIL_ENTRY("evil-immune-hang", minimal_supports, run)
