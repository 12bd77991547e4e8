/* run sends SIGTERM to its whole process group (kill(0, ...)): the certifier must not be in it.
 * The worker's signal filter refuses it (kill(0) names other processes too), so the worker
 * survives and abort()s instead (abort signals only itself).
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
