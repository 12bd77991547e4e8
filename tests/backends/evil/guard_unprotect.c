/* run computes correctly, then writes into the guard page after the output without faulting:
 * mprotect() it read-write, flip a byte, make it PROT_NONE again.
 * expect: OUT-OF-BOUNDS
 */
/* The page is the first page boundary at or after the output's end. If that page is readable it is no
 * guard; then the byte just past the output is flipped instead. */
#include <errno.h>
#include <sys/mman.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t end = (uintptr_t)out + (uintptr_t)(evil_elements(p) * evil_width(p));
  unsigned char* guard = (unsigned char*)((end + page - 1) & ~(page - 1));
  int fd[2];
  int readable = 1;
  if (pipe(fd) == 0) { /* write() from an inaccessible page fails with EFAULT instead of faulting */
    readable = !(write(fd[1], guard, 1) < 0 && errno == EFAULT);
    close(fd[0]), close(fd[1]);
  }
  if (!readable && mprotect(guard, page, PROT_READ | PROT_WRITE) == 0) {
    guard[0] ^= 0xff;
    mprotect(guard, page, PROT_NONE);
  } else {
    *(volatile unsigned char*)end ^= 0xff;
  }
  return r;
}

EVIL_ENTRY("evil-guard-unprotect", minimal_supports, run)
