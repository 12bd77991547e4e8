/* run recurses without end, 4 KiB of stack a frame, until the stack's guard faults: a SIGSEGV
 * that is nowhere near a certifier buffer (a CRASH, not an OUT-OF-BOUNDS).
 * expect: CRASH
 */
#include "evil.h"

static volatile int bottom = -1; /* never reached: keeps the compiler from proving the recursion infinite */

static int deep(int depth) {
  volatile char frame[4096];
  frame[depth % 4096] = (char)depth;
  if (depth == bottom) return 0;
  return deep(depth + 1) + frame[depth % 4096];
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  return deep(0) == 12345;
}

EVIL_ENTRY("evil-stack-overflow", minimal_supports, run)
