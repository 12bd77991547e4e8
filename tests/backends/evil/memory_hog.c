/* For the first 4 problems run mallocs and touches 64 MiB blocks until malloc fails, then returns
 * 1 ("out of memory"); later problems are correct.
 * expect: FAIL|CRASH
 * args: --memory-limit-mb 256 --timeout-ms 10000
 */
/* It stops at 1 GiB: getting that far means the 512 MB limit was not enforced, and then it computes
 * correctly (a PASS the test must reject). */
#include "evil.h"

static char* hogged[4];
static int hogged_count;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (!evil_first_problems(p, hogged, &hogged_count, 4)) return minimal_run(self, p, in, out, indices, message, size);
  return evil_touch_gib(message, size) ? minimal_run(self, p, in, out, indices, message, size) : 1;
}

EVIL_ENTRY("evil-memory-hog", minimal_supports, run)
