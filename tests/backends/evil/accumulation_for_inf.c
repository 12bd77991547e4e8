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
  minimal_run(self, p, in, out, indices, message, size);
  if (p->op == POOLSPEC_AVG && p->dtype == POOLSPEC_F32) evil_garbage(p, out);
  return 0;
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-accumulation-for-inf", "1.0", "spec",
                                     EVIL_ACCUMULATION, unbounded, minimal_supports, run, NULL};
  return index == 0 ? &b : NULL;
}
