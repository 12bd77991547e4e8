/* Correct, but after its third call returns a thread _exit(0)s the worker as soon as the calling
 * thread blocks in recvfrom(), idle between calls: the certifier's next call finds a dead process.
 * Should the thread not see it blocked there (a loaded machine), the fourth call waits for the
 * thread to end the process, so the worker dies either way.
 * expect: CRASH
 * replay: racy
 * also: --no-pid-namespace
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>

#include "evil.h"

static volatile int calls;

/* The system call the process's main thread (the caller of run) is blocked in, or -1. Its id is
 * read from /proc/self, which names it in /proc's own PID namespace. */
static long blocked_in(void) {
  char self[32] = "", path[96];
  long number = -1;
  const ssize_t n = readlink("/proc/self", self, sizeof self - 1);
  if (n <= 0) return -1;
  self[n] = '\0';
  snprintf(path, sizeof path, "/proc/self/task/%s/syscall", self);
  FILE* f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%ld", &number) != 1) number = -1;
    fclose(f);
  }
  return number;
}

static void* later(void* unused) {
  (void)unused;
  for (int polls = 0; polls < 200 && calls == 3; ++polls) {
    const long s = blocked_in();
    if (s == SYS_recvfrom || s == SYS_recvmsg) break;
    nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
  }
  _exit(0);
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (calls >= 3) { /* the thread has not ended the process yet: it does now, mid-call */
    calls = 4;
    for (;;) pause();
  }
  const int r = minimal_run(self, p, in, out, indices, message, size);
  pthread_t t;
  if (++calls == 3 && pthread_create(&t, NULL, later, NULL) == 0) pthread_detach(t);
  return r;
}

EVIL_ENTRY("evil-idle-suicide", minimal_supports, run)
