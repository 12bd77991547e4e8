/* run closes every file descriptor from 3 to 1023 (the certifier's channel among them), then
 * computes correctly: the worker can no longer report.
 * expect: CRASH
 * also: --no-pid-namespace
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-close-fds", minimal_supports, run)
