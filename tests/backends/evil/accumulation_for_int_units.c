/* accumulation_for returns integer_units = INT64_MAX for every problem, and every int8 average
 * is garbage (the integer twin of accumulation_for_inf).
 * expect: FAIL
 */
#include "evil.h"

static void loose(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self, (void)p;
  *out = (poolspec_accumulation){POOLSPEC_F64, 1, 1.0, INT64_MAX};
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  if (p->op == POOLSPEC_AVG && p->dtype == POOLSPEC_I8) evil_garbage(p, out);
  return 0;
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-accumulation-for-int-units", "1.0", "spec",
                                     EVIL_ACCUMULATION, loose, minimal_supports, run, NULL};
  return index == 0 ? &b : NULL;
}
