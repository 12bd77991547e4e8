/* run returns at once without writing; a detached thread writes the correct result 20 ms later
 * (through a pipe, so an unmapped buffer gives EFAULT, not a fault).
 * expect: FAIL|UNWRITTEN|UNSTABLE|OUT-OF-BOUNDS
 */
/* When the machine is slow, the late write lands while a later call runs, whose output may be
 * smaller: the bytes then fall past that call's output, an OUT-OF-BOUNDS verdict for it. */
/* Work finished after run returns does not count. */
#include <pthread.h>
#include <time.h>

#include "evil.h"

typedef struct late { void* out; size_t bytes; unsigned char result[]; } late;

static void* deliver(void* arg) {
  late* job = arg;
  nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
  evil_poke(job->out, job->result, job->bytes);
  free(job);
  return NULL;
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const size_t bytes = (size_t)evil_elements(p) * (size_t)evil_width(p);
  late* job = malloc(sizeof *job + bytes);
  if (!job) return snprintf(message, size, "out of memory"), 1;
  job->out = out, job->bytes = bytes;
  minimal_run(self, p, in, job->result, indices, message, size);
  pthread_t t;
  if (pthread_create(&t, NULL, deliver, job) != 0) return free(job), snprintf(message, size, "no thread"), 1;
  pthread_detach(t);
  return 0;
}

EVIL_ENTRY("evil-late-thread-write", minimal_supports, run)
