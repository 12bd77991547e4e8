/* For the first 2 problems run lifts its address-space limits (root may raise hard limits) and
 * touches 1 GiB: if that works it computes correctly (a PASS the test must reject), else returns 1.
 * expect: FAIL|CRASH
 * args: --memory-limit-mb 256
 */
#include <sys/resource.h>

#include "evil.h"

static char* hogged[2];
static int hogged_count;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  int hog = 0;
  for (int i = 0; i < hogged_count; ++i) hog |= strcmp(hogged[i], p->text) == 0;
  if (!hog && hogged_count < 2) hog = (hogged[hogged_count++] = strdup(p->text)) != NULL;
  if (!hog) return minimal_run(self, p, in, out, indices, message, size);
  const struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_AS, &unlimited), setrlimit(RLIMIT_DATA, &unlimited), setrlimit(RLIMIT_RSS, &unlimited);
  void* blocks[16];
  int got = 0;
  for (; got < 16 && (blocks[got] = malloc((size_t)64 << 20)) != NULL; ++got)
    memset(blocks[got], got + 1, (size_t)64 << 20);
  for (int i = 0; i < got; ++i) free(blocks[i]);
  if (got == 16) return minimal_run(self, p, in, out, indices, message, size);
  snprintf(message, size, "out of memory after %d MiB", got * 64);
  return 1;
}

EVIL_ENTRY("evil-rlimit-raise-hog", minimal_supports, run)
