/* run computes the output correctly, then pthread_exit()s the calling thread: the call never
 * returns; the process either exits (status 0) or lives on without that thread.
 * expect: CRASH|HANG
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 */
#include <pthread.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  pthread_exit(NULL);
}

EVIL_ENTRY("evil-pthread-exit-in-run", minimal_supports, run)
