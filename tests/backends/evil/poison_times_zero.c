/* A classic uninitialised-accumulator bug: each f32 result is out[i] * 0 + mean, reading the
 * output's old contents first. Correct for any finite poison; a NaN poison survives as itself.
 * expect: FAIL|UNSTABLE|UNWRITTEN
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (p->dtype != POOLSPEC_F32) return minimal_run(self, p, in, out, indices, message, size);
  const int64_t n = evil_elements(p);
  float* mean = malloc((size_t)(n ? n : 1) * sizeof *mean);
  if (!mean) return snprintf(message, size, "out of memory"), 1;
  minimal_run(self, p, in, mean, indices, message, size);
  for (int64_t i = 0; i < n; ++i) ((float*)out)[i] = ((float*)out)[i] * 0.0f + mean[i];
  free(mean);
  return 0;
}

EVIL_ENTRY("evil-poison-times-zero", minimal_supports, run)
