/* accumulation_for aims at the pole of gamma(n) = n u / (1 - n u): f32 sums and extra_operations =
 * 2^24 - K for a window of K taps, so n u == 1 exactly and the tolerance is +inf; f32 averages garbage.
 * expect: FAIL
 */
#include "evil.h"

static void pole(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self;
  int64_t taps = 1;
  for (int a = 0; a < p->spatial_rank; ++a) taps *= p->axes[a].kernel;
  const int64_t extra = (INT64_C(1) << 24) - taps;
  *out = (poolspec_accumulation){POOLSPEC_F32, (int32_t)(extra > 0 ? extra : 0), 0.5, 0};
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  return evil_run_wrong_averages(self, p, in, out, indices, message, size, POOLSPEC_F32);
}

EVIL_ENTRY_WITH("evil-accumulation-for-gamma-pole", pole, minimal_supports, run)
