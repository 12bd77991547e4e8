/* A correct backend that reads up to 4 KiB from stdin on every call: the worker's stdin must be
 * something that cannot block it or feed it the certifier's own data (/dev/null, say).
 * expect: PASS
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  char stolen[4096];
  if (read(0, stolen, sizeof stolen) < 0) {
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-reads-stdin", minimal_supports, run)
