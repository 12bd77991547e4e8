/* A correct backend whose version is a full page of 'v' with no NUL, followed by an inaccessible
 * page: an unbounded strlen faults; a bounded read sees a long (truncatable) version.
 * expect: LOAD-ERROR|PASS
 */
#include <sys/mman.h>

#include "evil.h"

static poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-version-unterminated", "1.0", "spec",
                             EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};

__attribute__((constructor)) static void place_version(void) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char* two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (two == MAP_FAILED) return;
  memset(two, 'v', page);
  mprotect(two + page, page, PROT_NONE);
  b.version = two;
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) { return index == 0 ? &b : NULL; }
