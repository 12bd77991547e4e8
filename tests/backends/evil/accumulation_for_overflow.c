/* accumulation_for fills in a valid declaration, then writes 512 bytes of 0x41 past the end of
 * the struct it was given (the caller's stack or heap); the backend is otherwise correct.
 * expect: CRASH|OUT-OF-BOUNDS|FAIL|LOAD-ERROR
 */
#include "evil.h"

static void overflow(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self, (void)p;
  volatile unsigned char* past = (volatile unsigned char*)(uintptr_t)out + sizeof *out;
  for (int i = 0; i < 512; ++i) past[i] = 0x41;
  *out = (poolspec_accumulation)EVIL_ACCUMULATION;
}

EVIL_ENTRY_WITH("evil-accumulation-for-overflow", overflow, minimal_supports, minimal_run)
