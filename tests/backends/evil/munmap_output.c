/* run computes correctly, then munmap()s every page the output touches (slack and canaries
 * included) and returns: the certifier finds no output to read.
 * expect: CRASH|OUT-OF-BOUNDS|FAIL|UNWRITTEN
 */
#include <sys/mman.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t first = (uintptr_t)out & ~(page - 1);
  const uintptr_t end = ((uintptr_t)out + (uintptr_t)(evil_elements(p) * evil_width(p)) + page - 1) & ~(page - 1);
  munmap((void*)first, end > first ? end - first : page);
  return r;
}

EVIL_ENTRY("evil-munmap-output", minimal_supports, run)
