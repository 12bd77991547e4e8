/* supports dereferences NULL on every call; run is correct (and never reached).
 * expect: CRASH
 */
#include "evil.h"

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  volatile int* volatile nowhere = NULL;
  *nowhere = 1;
  return minimal_supports(self, p, reason, size);
}

EVIL_ENTRY("evil-supports-crash", supports, minimal_run)
