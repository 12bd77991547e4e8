/* run SIGKILLs its parent (when it has one it can name: getppid() > 1), then computes correctly.
 * The certifier must survive whatever sits between it and the worker.
 * expect: CRASH|PASS
 * replay: racy (the reply may reach poolspec before the worker dies with its parent, or not)
 * also: --no-pid-namespace
 */
#include <signal.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const pid_t parent = getppid();
  if (parent > 1) kill(parent, SIGKILL);
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-kill-parent", minimal_supports, run)
