/* A "SIMD path" bug that only shows when the f32 output is 64-byte aligned: the last element is
 * clearly wrong. A certifier that never hands out 64-aligned outputs never sees it.
 * expect: FAIL|UNSTABLE
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  const int64_t n = evil_elements(p);
  if (p->dtype == POOLSPEC_F32 && n > 0 && (uintptr_t)out % 64 == 0) evil_spoil(p, out, n - 1);
  return 0;
}

EVIL_ENTRY("evil-aligned-only-bug", minimal_supports, run)
