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

EVIL_ENTRY_WITH("evil-accumulation-for-crash", crash, minimal_supports, minimal_run)
