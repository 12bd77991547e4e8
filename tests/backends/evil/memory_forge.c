/* For 20 calls run flips the first input byte, then finds every whole copy of the original input in
 * the process's writable memory and flips it too: an in-worker input check sees no change.
 * expect: OUT-OF-BOUNDS|CRASH
 */
/* CRASH: under AddressSanitizer, whose memcmp stops the scan at the first poisoned byte. */
/* Correct results throughout. Shared mappings of real files outside /tmp are left alone. */
#include <sys/mman.h>

#include "evil.h"

static unsigned char* original;
static evil_map maps[4096];
static int calls;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  const size_t bytes = (size_t)(evil_input_elements(p) * evil_width(p));
  if (++calls > 20 || bytes == 0) return r;
  const size_t n = bytes;
  if (!(original = realloc(original, n))) return r;
  memcpy(original, in, n);
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), first = (uintptr_t)in & ~(page - 1);
  const int unlocked = mprotect((void*)first, page, PROT_READ | PROT_WRITE) == 0;
  *(volatile unsigned char*)(uintptr_t)in ^= 0x55;
  if (unlocked) mprotect((void*)first, page, PROT_READ);
  if (n < 16) return r; /* too short to find copies without false matches */
  const int count = evil_maps(maps, 4096);
  for (int m = 0; m < count; ++m) {
    if (maps[m].perms[0] != 'r' || maps[m].perms[1] != 'w') continue;
    if (maps[m].perms[3] == 's' && !evil_shared_is_memory(&maps[m])) continue;
    if (strncmp(maps[m].path, "[v", 2) == 0 || maps[m].end - maps[m].start > ((uintptr_t)1 << 30)) continue;
    unsigned char* at = (unsigned char*)maps[m].start;
    unsigned char* const end = (unsigned char*)maps[m].end;
    while (end - at >= (ptrdiff_t)n && (at = memchr(at, original[0], (size_t)(end - at) - n + 1)) != NULL) {
      if (at != original && memcmp(at, original, n) == 0) at[0] ^= 0x55;
      ++at;
    }
  }
  return r;
}

EVIL_ENTRY("evil-memory-forge", minimal_supports, run)
