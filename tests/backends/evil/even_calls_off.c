/* Correct on odd-numbered calls (counted over the whole process); on even ones the first
 * element is off by a lot (f32 times 1.5, int8 bit 6 flipped).
 * expect: UNSTABLE|FAIL
 */
#include "evil.h"

static unsigned long calls;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  if (++calls % 2 == 0 && evil_elements(p) > 0) evil_spoil(p, out, 0);
  return 0;
}

EVIL_ENTRY("evil-even-calls-off", minimal_supports, run)
