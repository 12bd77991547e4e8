/* run computes correctly, then mprotect()s the input's first page writable, flips the first
 * input byte and makes the page read-only again: the input is changed without a fault.
 * expect: OUT-OF-BOUNDS
 */
#include <sys/mman.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  const uintptr_t page = (uintptr_t)in & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
  const int unlocked = mprotect((void*)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE) == 0;
  *(volatile unsigned char*)(uintptr_t)in ^= 0x55; /* faults if the mprotect was refused */
  if (unlocked) mprotect((void*)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ);
  return r;
}

EVIL_ENTRY("evil-input-write", minimal_supports, run)
