/* run computes correctly, and on every second call (counted over the process: the second call of
 * each problem) also flips the bytes of one element past the output's end.
 * expect: OUT-OF-BOUNDS
 */
#include "evil.h"

static unsigned long calls;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  if (++calls % 2 == 0) {
    volatile unsigned char* past = (unsigned char*)out + evil_elements(p) * evil_width(p);
    for (int i = 0; i < evil_width(p); ++i) past[i] ^= 0x5a;
  }
  return r;
}

EVIL_ENTRY("evil-write-past-alternate", minimal_supports, run)
