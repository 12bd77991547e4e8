/* For the first 4 problems run mallocs and touches 64 MiB blocks until malloc fails, then returns
 * 1 ("out of memory"); later problems are correct.
 * expect: FAIL|CRASH
 * args: --memory-limit-mb 256
 */
/* It stops at 1 GiB: getting that far means the 512 MB limit was not enforced, and then it computes
 * correctly (a PASS the test must reject). */
#include "evil.h"

static char* hogged[4];
static int hogged_count;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  int hog = 0;
  for (int i = 0; i < hogged_count; ++i) hog |= strcmp(hogged[i], p->text) == 0;
  if (!hog && hogged_count < 4) hog = (hogged[hogged_count++] = strdup(p->text)) != NULL;
  if (!hog) return minimal_run(self, p, in, out, indices, message, size);
  void* blocks[16];
  int got = 0;
  for (; got < 16 && (blocks[got] = malloc((size_t)64 << 20)) != NULL; ++got)
    memset(blocks[got], got + 1, (size_t)64 << 20);
  for (int i = 0; i < got; ++i) free(blocks[i]);
  if (got == 16) return minimal_run(self, p, in, out, indices, message, size);
  snprintf(message, size, "out of memory after %d MiB", got * 64);
  return 1;
}

EVIL_ENTRY("evil-memory-hog", minimal_supports, run)
