/* run installs a SIGSEGV/SIGBUS handler that siglongjmp()s back, pokes one byte past the output and
 * the input (a guard-page fault is swallowed unseen), restores the old handlers, returns correct output.
 * expect: OUT-OF-BOUNDS|CRASH|FAIL
 */
/* Without guard pages the same code corrupts memory: a swallowed fault is still out of bounds. */
#include <setjmp.h>
#include <signal.h>

#include "evil.h"

static sigjmp_buf back;

static void swallow(int sig) { siglongjmp(back, sig); }

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  struct sigaction mine, old_segv, old_bus;
  memset(&mine, 0, sizeof mine);
  mine.sa_handler = swallow;
  sigemptyset(&mine.sa_mask);
  sigaction(SIGSEGV, &mine, &old_segv), sigaction(SIGBUS, &mine, &old_bus);
  volatile unsigned char* past_out = (unsigned char*)out + evil_elements(p) * evil_width(p);
  const volatile unsigned char* past_in = (const unsigned char*)in + evil_input_elements(p) * evil_width(p);
  if (sigsetjmp(back, 1) == 0) *past_out ^= 0x5a;
  if (sigsetjmp(back, 1) == 0) (void)*past_in;
  sigaction(SIGSEGV, &old_segv, NULL), sigaction(SIGBUS, &old_bus, NULL);
  return r;
}

EVIL_ENTRY("evil-signal-swallow", minimal_supports, run)
