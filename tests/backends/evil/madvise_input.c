/* run computes correctly, then madvise(MADV_DONTNEED)s the input's pages: a private anonymous
 * input silently becomes zeros (no write, no fault, no mprotect).
 * expect: OUT-OF-BOUNDS|PASS
 */
/* If the input is a shared or file mapping nothing changes, and a pass is right. */
#include <sys/mman.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t first = (uintptr_t)in & ~(page - 1);
  const uintptr_t bytes = (uintptr_t)(evil_input_elements(p) * evil_width(p));
  const uintptr_t end = ((uintptr_t)in + bytes + page - 1) & ~(page - 1);
  madvise((void*)first, end > first ? end - first : page, MADV_DONTNEED);
  return r;
}

EVIL_ENTRY("evil-madvise-input", minimal_supports, run)
