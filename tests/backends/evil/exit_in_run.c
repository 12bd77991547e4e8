/* run computes the output correctly, then calls exit(0): a clean exit (atexit handlers and all)
 * in the middle of a call is still a crash, not a result.
 * expect: CRASH
 * also: --no-pid-namespace
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  exit(0);
}

EVIL_ENTRY("evil-exit-in-run", minimal_supports, run)
