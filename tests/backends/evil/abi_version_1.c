/* A correct backend built against version 1 of backend.h: its struct ends at `context`, and the
 * page after it is unmapped, so a poolspec that read version 2's output_shape from it would fault.
 * expect: PASS
 */
#include <sys/mman.h>

#include "evil.h"

/* Version 1's struct: version 2's without its last member. */
typedef struct {
  uint32_t abi_version;
  const char *name, *version, *rules;
  poolspec_accumulation accumulation;
  void (*accumulation_for)(const poolspec_backend*, const poolspec_problem*, poolspec_accumulation*);
  int (*supports)(const poolspec_backend*, const poolspec_problem*, char*, size_t);
  int (*run)(const poolspec_backend*, const poolspec_problem*, const void*, void*, int64_t*, char*, size_t);
  void* context;
} backend_v1;

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static backend_v1* b = NULL;
  if (!b) {
    const long page = sysconf(_SC_PAGESIZE);
    char* pages = mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED || mprotect(pages + page, (size_t)page, PROT_NONE) != 0) return NULL;
    b = (backend_v1*)(pages + page - sizeof(backend_v1));
    const backend_v1 v1 = {POOLSPEC_BACKEND_ABI_VERSION_1, "evil-abi-version-1", "1.0", "spec",
                           EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
    *b = v1;
  }
  return index == 0 ? (const poolspec_backend*)b : NULL;
}
