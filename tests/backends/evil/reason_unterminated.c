/* supports refuses every problem and fills all reason_size bytes of reason with 'R', leaving no
 * NUL: a reader that relies on one runs off the end.
 * expect: UNSUPPORTED|FAIL
 */
#include "evil.h"

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self, (void)p;
  memset(reason, 'R', size);
  return 0;
}

EVIL_ENTRY("evil-reason-unterminated", supports, minimal_run)
