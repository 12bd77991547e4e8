/* A divisor bug (always dividing by the in-bounds taps) that covers its tracks: after the call run
 * rewrites the problem it was given to say divisor = exclude.
 * expect: FAIL
 */
/* A certifier that judges against the struct as the backend left it passes the bug. */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  poolspec_problem lie = *p;
  lie.divisor = POOLSPEC_EXCLUDE, lie.divisor_override = 0;
  const int r = minimal_run(self, &lie, in, out, indices, message, size);
  evil_poke((void*)(uintptr_t)p, &lie, sizeof lie);
  return r;
}

EVIL_ENTRY("evil-problem-rewrite", minimal_supports, run)
