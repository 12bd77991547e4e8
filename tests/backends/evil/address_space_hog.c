/* A constructor reserves all free address space (PROT_NONE, no memory): the worker can no
 * longer map a buffer, stack or heap page, and must fail loudly, not skip problems and pass.
 * expect: LOAD-ERROR|CRASH|FAIL
 */
/* Chunks from 1 TiB down to single pages, until every size fails. */
#include <sys/mman.h>

#include "evil.h"

__attribute__((constructor)) static void reserve_everything(void) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (size_t chunk = (size_t)1 << 40; chunk >= page; chunk /= 2)
    while (mmap(NULL, chunk, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) != MAP_FAILED) {
    }
}

EVIL_ENTRY("evil-address-space-hog", minimal_supports, minimal_run)
