/* supports returns 2 (not 0 or 1) for every problem minimal supports; run is correct.
 * expect: FAIL
 */
#include "evil.h"

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  return minimal_supports(self, p, reason, size) ? 2 : 0;
}

EVIL_ENTRY("evil-supports-two", supports, minimal_run)
