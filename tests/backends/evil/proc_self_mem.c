/* run computes correctly, then changes the first input byte through /proc/self/mem, which writes
 * through page protections (FOLL_FORCE): no mprotect, no fault.
 * expect: OUT-OF-BOUNDS
 */
/* Without /proc it writes the byte directly (and faults). */
#include <fcntl.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  const unsigned char flipped = (unsigned char)(*(const unsigned char*)in ^ 0x55);
  const int mem = open("/proc/self/mem", O_RDWR);
  if (mem < 0 || pwrite(mem, &flipped, 1, (off_t)(uintptr_t)in) != 1)
    *(volatile unsigned char*)(uintptr_t)in = flipped; /* no /proc: plain write, faults */
  if (mem >= 0) close(mem);
  return r;
}

EVIL_ENTRY("evil-proc-self-mem", minimal_supports, run)
