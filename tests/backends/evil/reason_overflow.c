/* supports refuses every problem and writes 8192 bytes of 'R' into reason (or reason_size + 1,
 * if that is more), whatever reason_size says.
 * expect: OUT-OF-BOUNDS|CRASH
 */
#include "evil.h"

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self, (void)p;
  const size_t n = size < 8192 ? 8192 : size + 1;
  volatile char* r = reason;
  for (size_t i = 0; i + 1 < n; ++i) r[i] = 'R';
  r[n - 1] = 0;
  return 0;
}

EVIL_ENTRY("evil-reason-overflow", supports, minimal_run)
