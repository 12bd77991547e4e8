/* run computes correctly, then flips the byte just before the output.
 * expect: OUT-OF-BOUNDS
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  ((volatile unsigned char*)out)[-1] ^= 0xa5;
  return r;
}

EVIL_ENTRY("evil-write-before-output", minimal_supports, run)
