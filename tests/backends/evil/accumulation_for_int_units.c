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
  return evil_run_wrong_averages(self, p, in, out, indices, message, size, POOLSPEC_I8);
}

EVIL_ENTRY_WITH("evil-accumulation-for-int-units", loose, minimal_supports, run)
