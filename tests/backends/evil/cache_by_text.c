/* A cache keyed by the problem text: a repeated problem gets one f32 average moved to the float
 * on the other side of its exact value (under 1 ulp: in tolerance, but not the same bits).
 * expect: UNSTABLE
 */
#include "evil.h"

static char* seen[8192];
static int seen_count;

static int seen_before(const char* text) {
  for (int i = 0; i < seen_count; ++i)
    if (strcmp(seen[i], text) == 0) return 1;
  if (seen_count < 8192) seen[seen_count++] = strdup(text);
  return 0;
}

/* The first element whose exact mean is not a float: flipped to its other float neighbour. */
static void nudge(const poolspec_problem* p, const void* in, float* out) {
  int64_t o[POOLSPEC_MAX_SPATIAL] = {0}, outputs = 1, at = 0;
  for (int a = 0; a < p->spatial_rank; ++a) outputs *= p->axes[a].output;
  for (int64_t plane = 0; plane < p->batch * p->channels; ++plane)
    for (int64_t i = 0; i < outputs; ++i, ++at) {
      const double v = window(p, in, plane, o);
      const float f = out[at], g = nextafterf(f, v > f ? INFINITY : -INFINITY);
      if (isfinite(f) && isfinite(g) && (double)f != v) { out[at] = g; return; }
      for (int a = p->spatial_rank - 1; a >= 0 && ++o[a] == p->axes[a].output; --a) o[a] = 0;
    }
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int cached = seen_before(p->text);
  minimal_run(self, p, in, out, indices, message, size);
  if (cached && p->op == POOLSPEC_AVG && p->dtype == POOLSPEC_F32) nudge(p, in, out);
  return 0;
}

EVIL_ENTRY("evil-cache-by-text", minimal_supports, run)
