/* A constructor starts a worker thread; run() hands each call to it and waits for the answer
 * (a thread pool of one). A correct backend: threads made at load must keep working.
 * expect: PASS
 * also: --no-pid-namespace
 */
#include <pthread.h>

#include "evil.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct {
  const poolspec_backend* self;
  const poolspec_problem* p;
  const void* in;
  void* out;
  int64_t* indices;
  char* message;
  size_t size;
  int result, pending;
} job;
static int have_worker;

static void* worker(void* unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!job.pending) pthread_cond_wait(&changed, &lock);
    job.result = minimal_run(job.self, job.p, job.in, job.out, job.indices, job.message, job.size);
    job.pending = 0;
    pthread_cond_broadcast(&changed);
  }
  return NULL;
}

__attribute__((constructor)) static void start_worker(void) {
  pthread_t t;
  have_worker = pthread_create(&t, NULL, worker, NULL) == 0;
  if (have_worker) pthread_detach(t);
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (!have_worker) return minimal_run(self, p, in, out, indices, message, size);
  pthread_mutex_lock(&lock);
  job.self = self, job.p = p, job.in = in, job.out = out;
  job.indices = indices, job.message = message, job.size = size;
  job.pending = 1;
  pthread_cond_broadcast(&changed);
  while (job.pending) pthread_cond_wait(&changed, &lock);
  const int r = job.result;
  pthread_mutex_unlock(&lock);
  return r;
}

EVIL_ENTRY("evil-worker-thread", minimal_supports, run)
