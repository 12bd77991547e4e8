/* Computes correctly in the default FP environment but leaves a hostile one behind (constructor and
 * after every call): round toward zero, and on x86 flush-to-zero and denormals-are-zero.
 * expect: PASS
 */
/* Anything the worker computes between calls (tolerances, conversions, a reference) runs under it. */
#include <fenv.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "evil.h"

static void hostile(int on) {
  fesetround(on ? FE_TOWARDZERO : FE_TONEAREST);
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(on ? _mm_getcsr() | 0x8040u : _mm_getcsr() & ~0x8040u); /* FTZ | DAZ */
#endif
}

__attribute__((constructor)) static void leave_it_hostile(void) { hostile(1); }

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  hostile(0);
  const int r = minimal_run(self, p, in, out, indices, message, size);
  hostile(1);
  return r;
}

EVIL_ENTRY("evil-fenv-leak", minimal_supports, run)
