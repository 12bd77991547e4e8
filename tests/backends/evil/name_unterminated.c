/* A correct backend whose name is the last 8 bytes of a page ("evilname") with no NUL, followed
 * by an inaccessible page: any read past 8 characters faults (strlen, or strnlen(name, 65)).
 * expect: LOAD-ERROR
 */
#include <sys/mman.h>

#include "evil.h"

static poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-name-unterminated", "1.0", "spec",
                             EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};

__attribute__((constructor)) static void place_name(void) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char* two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (two == MAP_FAILED) return;
  memcpy(two + page - 8, "evilname", 8);
  mprotect(two + page, page, PROT_NONE);
  b.name = two + page - 8;
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) { return index == 0 ? &b : NULL; }
