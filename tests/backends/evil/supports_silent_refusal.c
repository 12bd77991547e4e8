/* supports refuses every problem without writing a reason: whatever the reason buffer held
 * before the call (poison?) must not reach the report as text.
 * expect: UNSUPPORTED
 */
#include "evil.h"

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self, (void)p, (void)reason, (void)size;
  return 0;
}

EVIL_ENTRY("evil-supports-silent-refusal", supports, minimal_run)
