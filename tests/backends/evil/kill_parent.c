/* run SIGKILLs its parent (when it has one it can name: getppid() > 1), then computes correctly.
 * Without a PID namespace the parent is the worker's starter, or poolspec itself (a subreaper)
 * in the moment between the starter's death and the kernel's parent-death signal to the worker.
 * The worker's signal filter refuses the kill, so every run passes.
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
