/* Declares double sums (POOLSPEC_F64) and writes NaN into every f32 output element; int8 results
 * are correct. NaN must never be "within tolerance".
 * expect: FAIL
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (p->dtype != POOLSPEC_F32) return minimal_run(self, p, in, out, indices, message, size);
  for (int64_t i = 0; i < evil_elements(p); ++i) ((float*)out)[i] = NAN;
  return 0;
}

EVIL_ENTRY("evil-nan-everywhere", minimal_supports, run)
