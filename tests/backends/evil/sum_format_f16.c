/* Declares sum_format = POOLSPEC_F16 for every problem: f16 sums (u = 2^-11) would bound an f32
 * average loosely enough to pass results 64 ulps off, which is what it returns. F16 sums bound
 * only f16 data, so on each f32 average the declaration is refused and the run fails.
 * expect: FAIL
 */
#include <math.h>

#include "evil.h"

static int off_by_64_ulps_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                              int64_t* indices, char* message, size_t size) {
  const int status = minimal_run(self, p, in, out, indices, message, size);
  if (p->op != POOLSPEC_AVG || p->dtype != POOLSPEC_F32) return status;
  float* y = (float*)out;
  for (int64_t i = 0; i < evil_elements(p); ++i)
    if (isfinite(y[i]) && y[i] != 0)
      for (int step = 0; step < 64; ++step) y[i] = nextafterf(y[i], 0.0f);
  return status;
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-sum-format-f16", "1.0", "spec",
                                     {POOLSPEC_F16, 1, 1.0, 0}, NULL, minimal_supports, off_by_64_ulps_run, NULL};
  return index == 0 ? &b : NULL;
}
