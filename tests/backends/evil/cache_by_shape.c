/* A result cache keyed by shape only (not pads, divisor, bias, rounding rules or the input):
 * the first problem of a shape is computed, every later one of that shape gets its result.
 * expect: FAIL|UNSTABLE
 */
/* The key: op, dtype, batch, channels and each axis's extent, kernel, stride, dilation, output. */
#include "evil.h"

enum { KEY = 5 + 5 * POOLSPEC_MAX_SPATIAL, SLOTS = 1024 };
static int64_t keys[SLOTS][KEY];
static void* results[SLOTS];
static int used;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  int64_t key[KEY] = {p->op, p->dtype, p->batch, p->channels, p->spatial_rank};
  for (int a = 0; a < p->spatial_rank; ++a) {
    const poolspec_axis* x = &p->axes[a];
    int64_t* k = &key[5 + 5 * a];
    k[0] = x->extent, k[1] = x->kernel, k[2] = x->stride, k[3] = x->dilation, k[4] = x->output;
  }
  const size_t bytes = (size_t)evil_elements(p) * (size_t)evil_width(p);
  for (int i = 0; i < used; ++i)
    if (memcmp(keys[i], key, sizeof key) == 0) {
      memcpy(out, results[i], bytes);
      return 0;
    }
  const int r = minimal_run(self, p, in, out, indices, message, size);
  if (used < SLOTS && (results[used] = malloc(bytes ? bytes : 1)) != NULL) {
    memcpy(keys[used], key, sizeof key);
    memcpy(results[used++], out, bytes);
  }
  return r;
}

EVIL_ENTRY("evil-cache-by-shape", minimal_supports, run)
