/* run SIGKILLs its parent (when it has one it can name: getppid() > 1), then computes correctly.
 * Without a PID namespace the parent is the worker's starter, and once that has died, poolspec
 * itself (a subreaper), for as long as the kernel's parent-death signal has not yet ended the
 * worker: the worker's signal filter refuses both kills, so every run passes.
 * expect: PASS
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
