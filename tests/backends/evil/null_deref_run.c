/* run computes correctly, then writes through a NULL pointer: a SIGSEGV at address 0, outside
 * every guard page (a CRASH, not an OUT-OF-BOUNDS).
 * expect: CRASH
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  volatile int* volatile nowhere = NULL;
  *nowhere = 1;
  return 0;
}

EVIL_ENTRY("evil-null-deref-run", minimal_supports, run)
