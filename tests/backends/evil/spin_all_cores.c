/* run starts one busy-looping thread per online core and busy-loops itself: it never returns
 * and burns CPU several times faster than wall-clock time passes.
 * expect: HANG
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 */
#include <pthread.h>

#include "evil.h"

static void* spin(void* unused) {
  (void)unused;
  for (volatile unsigned long i = 0;; ++i) {
  }
  return NULL;
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)p, (void)in, (void)out, (void)indices, (void)message, (void)size;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  for (long i = 0; i < cores; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, spin, NULL) == 0) pthread_detach(t);
  }
  spin(NULL);
  return 0;
}

EVIL_ENTRY("evil-spin-all-cores", minimal_supports, run)
