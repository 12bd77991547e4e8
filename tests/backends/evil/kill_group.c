/* run sends SIGTERM to its whole process group (kill(0, ...)): the certifier must not be in it.
 * If the worker survives (a PID-namespace init ignores SIGTERM) it abort()s instead.
 * expect: CRASH
 * also: --no-pid-namespace
 */
#include <signal.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)p, (void)in, (void)out, (void)indices, (void)message, (void)size;
  kill(0, SIGTERM);
  abort();
}

EVIL_ENTRY("evil-kill-group", minimal_supports, run)
