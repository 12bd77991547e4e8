/* A valid static declaration, but accumulation_for returns output_ulps = +INFINITY for every
 * problem, and every f32 average is garbage: per-problem declarations must be validated too.
 * expect: FAIL
 */
#include "evil.h"

static void unbounded(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self, (void)p;
  *out = (poolspec_accumulation){POOLSPEC_F64, 1, INFINITY, 0};
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  return evil_run_wrong_averages(self, p, in, out, indices, message, size, POOLSPEC_F32);
}

EVIL_ENTRY_WITH("evil-accumulation-for-inf", unbounded, minimal_supports, run)
