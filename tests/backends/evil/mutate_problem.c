/* run overwrites the (const) problem it was given with garbage and its text with 'X's (through
 * a pipe: no fault if read-only), then computes a saved copy correctly.
 * expect: PASS
 */
/* Garbage: batch -1, rank 99, text pointing at a forged report line. */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const poolspec_problem saved = *p;
  poolspec_problem junk;
  memset(&junk, 0xff, sizeof junk);
  junk.batch = -1, junk.spatial_rank = 99, junk.text = "forged\n\x1b[2J evil-mutate-problem | PASS";
  char xs[4096];
  const size_t length = saved.text ? strnlen(saved.text, sizeof xs) : 0;
  memset(xs, 'X', length);
  evil_poke((void*)(uintptr_t)saved.text, xs, length);
  evil_poke((void*)(uintptr_t)p, &junk, sizeof junk);
  return minimal_run(self, &saved, in, out, indices, message, size);
}

EVIL_ENTRY("evil-mutate-problem", minimal_supports, run)
