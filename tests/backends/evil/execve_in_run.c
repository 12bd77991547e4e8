/* run computes the output correctly, then replaces the worker's image with /bin/sleep 3600
 * (same pid, inherited fds): whatever the worker was going to do next never happens.
 * expect: HANG|CRASH
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 */
#include "evil.h"

extern char** environ;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  char* argv[] = {"sleep", "3600", NULL};
  execve("/bin/sleep", argv, environ);
  for (;;) pause();
  return 0; /* not reached */
}

EVIL_ENTRY("evil-execve-in-run", minimal_supports, run)
