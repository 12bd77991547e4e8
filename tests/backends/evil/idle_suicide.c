/* Correct, but 1 ms after its third call returns a thread _exit(0)s the worker, likely while it
 * waits idle for the next problem: the certifier's next write goes to a dead process (EPIPE/SIGPIPE).
 * expect: CRASH
 */
#include <pthread.h>
#include <time.h>

#include "evil.h"

static int calls;

static void* later(void* unused) {
  (void)unused;
  nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
  _exit(0);
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  pthread_t t;
  if (++calls == 3 && pthread_create(&t, NULL, later, NULL) == 0) pthread_detach(t);
  return r;
}

EVIL_ENTRY("evil-idle-suicide", minimal_supports, run)
