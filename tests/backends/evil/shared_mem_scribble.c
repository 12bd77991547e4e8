/* run zeroes every writable shared-memory mapping (never a shared file outside /tmp) except the
 * output and message, then returns garbage: shared status words now read 0, often "success".
 * expect: FAIL|CRASH|HANG|UNSTABLE|UNWRITTEN|OUT-OF-BOUNDS
 */
/* Shared memory here: anonymous, memfd, SysV, /dev/shm or /tmp mappings. */
#include "evil.h"

static evil_map maps[4096];

static void zero(uintptr_t from, uintptr_t to) {
  if (to > from) memset((void*)from, 0, to - from);
}

static uintptr_t clamp(uintptr_t x, uintptr_t lo, uintptr_t hi) { return x < lo ? lo : x > hi ? hi : x; }

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)in, (void)indices;
  const uintptr_t o0 = (uintptr_t)out, o1 = o0 + (uintptr_t)(evil_elements(p) * evil_width(p));
  const uintptr_t m0 = (uintptr_t)message, m1 = m0 + size;
  const int count = evil_maps(maps, 4096);
  for (int m = 0; m < count; ++m) {
    if (strncmp(maps[m].perms, "rw", 2) != 0 || maps[m].perms[3] != 's') continue;
    if (!evil_shared_is_memory(&maps[m])) continue;
    if (maps[m].end - maps[m].start > ((uintptr_t)256 << 20)) continue; /* not a huge reservation */
    uintptr_t cut[4] = {o0, o1, m0, m1}; /* zero [start, end) minus the two buffers */
    if (m0 < o0) cut[0] = m0, cut[1] = m1, cut[2] = o0, cut[3] = o1;
    uintptr_t at = maps[m].start;
    for (int k = 0; k < 4; k += 2) {
      const uintptr_t a = clamp(cut[k], maps[m].start, maps[m].end);
      const uintptr_t b = clamp(cut[k + 1], maps[m].start, maps[m].end);
      if (a > at) zero(at, a);
      if (b > at) at = b;
    }
    zero(at, maps[m].end);
  }
  evil_garbage(p, out);
  return 0;
}

EVIL_ENTRY("evil-shared-mem-scribble", minimal_supports, run)
