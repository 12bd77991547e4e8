/* run returns 0 at once without writing any output.
 * expect: UNWRITTEN
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)p, (void)in, (void)out, (void)indices, (void)message, (void)size;
  return 0;
}

EVIL_ENTRY("evil-never-write", minimal_supports, run)
