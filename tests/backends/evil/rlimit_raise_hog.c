/* For the first 2 problems run lifts its address-space limits (root may raise hard limits) and
 * touches 1 GiB: if that works it computes correctly (a PASS the test must reject), else returns 1.
 * expect: FAIL|CRASH
 * args: --memory-limit-mb 256 --timeout-ms 10000
 */
#include <sys/resource.h>

#include "evil.h"

static char* hogged[2];
static int hogged_count;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (!evil_first_problems(p, hogged, &hogged_count, 2)) return minimal_run(self, p, in, out, indices, message, size);
  const struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_AS, &unlimited), setrlimit(RLIMIT_DATA, &unlimited), setrlimit(RLIMIT_RSS, &unlimited);
  return evil_touch_gib(message, size) ? minimal_run(self, p, in, out, indices, message, size) : 1;
}

EVIL_ENTRY("evil-rlimit-raise-hog", minimal_supports, run)
