/* accumulation_for dereferences NULL; supports and run are correct.
 * expect: CRASH|LOAD-ERROR
 */
#include "evil.h"

static void crash(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self, (void)p;
  volatile int* volatile nowhere = NULL;
  *nowhere = 1;
  *out = (poolspec_accumulation)EVIL_ACCUMULATION;
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-accumulation-for-crash", "1.0", "spec",
                                     EVIL_ACCUMULATION, crash, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
