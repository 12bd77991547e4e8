/* Blind-spot backends: the minimal backend (minimal_backend.c) with one bug each, of the kinds real
 * kernels have shipped, each in a place only the suites' sweeps reach: the other parts of ci pass
 * the first nine, the sweeps fail them (tests/test_certify.cpp). blind-rank3 is smoke's: its 3-D
 * shapes fail it (ci's 3-D shapes do too).
 *   blind-nan-body        a max lets a NaN through in channels 4..7 of each group of 8, whatever
 *                         the NaN rule (a SIMD body that treats NaN unlike its tail)
 *   blind-all-nan         a max over nothing but NaN gives +0
 *   blind-channels-48     channel 47 is off by one when there are 16 more than a multiple of 32
 *   blind-half-vector     f32: the last channel is off by one when a half vector (8 lanes) and a
 *                         tail of 2 to 6 lanes follow the whole 16-lane vectors (channels % 16 of
 *                         10 to 14), a count none of peers' tiles and vector edges is
 *   blind-byte-vectors    int8: channel 65 (the second 64-lane vector's second lane) is off by
 *                         one when there are more than 65 channels
 *   blind-wide-average    an average's last column scaled by taps / (taps + 1) in rows 64 or more wide
 *   blind-large-window    an f32 average of over 100 taps summed in f16
 *   blind-override        divisor_override ignored (the in-bounds count used)
 *   blind-dilation3       a dilation of 3 or more taken one smaller on the last axis
 *   blind-rank3           a 3-D problem's pad_end on depth ignored
 *   blind-shape           runs right, but its own shape rule (output_shape, backend.h version 2)
 *                         answers one output for a window longer than the padded input, as a
 *                         difference-or-zero subtraction does, where it must refuse: only the shape
 *                         questions reach it
 */
#define poolspec_backend_entry minimal_backend_entry
#include "minimal_backend.c"
#undef poolspec_backend_entry

static int64_t plane_size(const poolspec_problem* p, int out) {
  int64_t n = 1;
  for (int a = 0; a < p->spatial_rank; ++a) n *= out ? p->axes[a].output : p->axes[a].extent;
  return n;
}

/* Output `at` of `plane` (its window at o[]): whether some in-bounds value is NaN, and whether
 * every one is. */
static int window_has_nan(const poolspec_problem* p, const void* in, int64_t plane, const int64_t* o) {
  poolspec_problem q = *p; /* a NaN propagates from the first element on */
  q.nan_policy = POOLSPEC_NAN_PROPAGATE;
  q.max_start = POOLSPEC_MAX_FROM_FIRST;
  q.empty_window = POOLSPEC_EMPTY_ZERO;
  return isnan(window(&q, in, plane, o));
}

static int window_all_nan(const poolspec_problem* p, const void* in, int64_t plane, const int64_t* o) {
  poolspec_problem q = *p; /* NaN here only when no in-bounds value is a number */
  q.nan_policy = POOLSPEC_NAN_IGNORE;
  q.max_start = POOLSPEC_MAX_FROM_FIRST;
  q.empty_window = POOLSPEC_EMPTY_ZERO;
  return isnan(window(&q, in, plane, o));
}

/* The minimal backend's max, then `fix(p, in, plane, o, &value)` on every f32 output. */
static int max_then(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                    int64_t* indices, char* message, size_t size,
                    void (*fix)(const poolspec_problem*, const void*, int64_t, const int64_t*, float*)) {
  const int status = minimal_run(self, p, in, out, indices, message, size);
  if (p->op != POOLSPEC_MAX || p->dtype != POOLSPEC_F32) return status;
  const int64_t outputs = plane_size(p, 1);
  int64_t o[POOLSPEC_MAX_SPATIAL] = {0};
  for (int64_t plane = 0, at = 0; plane < p->batch * p->channels; ++plane)
    for (int64_t i = 0; i < outputs; ++i, ++at) {
      fix(p, in, plane, o, (float*)out + at);
      for (int a = p->spatial_rank - 1; a >= 0 && ++o[a] == p->axes[a].output; --a) o[a] = 0;
    }
  return status;
}

/* Channels 4..7 of each group of 8 are a SIMD body whose compare lets a NaN through: the output
 * is NaN whenever the window holds one, whatever the NaN rule. */
static void nan_body_fix(const poolspec_problem* p, const void* in, int64_t plane, const int64_t* o, float* v) {
  if ((plane % p->channels) % 8 >= 4 && window_has_nan(p, in, plane, o)) *v = NAN;
}

static int nan_body_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                        int64_t* indices, char* message, size_t size) {
  return max_then(self, p, in, out, indices, message, size, nan_body_fix);
}

/* A window of nothing but NaN gives +0, the kernel's value for "nothing seen". */
static void all_nan_fix(const poolspec_problem* p, const void* in, int64_t plane, const int64_t* o, float* v) {
  if (window_all_nan(p, in, plane, o)) *v = 0.0f;
}

static int all_nan_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                       int64_t* indices, char* message, size_t size) {
  return max_then(self, p, in, out, indices, message, size, all_nan_fix);
}

/* Adds one to every output of channel `channel` (NCHW, the minimal backend's layout; f32 or i8),
 * or takes one away from an i8 output of `top`. */
static void nudge_channel(const poolspec_problem* p, void* out, int64_t channel, double top) {
  const int64_t outputs = plane_size(p, 1);
  for (int64_t n = 0; n < p->batch; ++n)
    for (int64_t i = 0; i < outputs; ++i) {
      const int64_t at = (n * p->channels + channel) * outputs + i;
      if (p->dtype == POOLSPEC_F32) ((float*)out)[at] += 1.0f;
      if (p->dtype == POOLSPEC_I8) ((int8_t*)out)[at] += ((int8_t*)out)[at] < top ? 1 : -1;
    }
}

static int channels_48_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                           int64_t* indices, char* message, size_t size) {
  const int status = minimal_run(self, p, in, out, indices, message, size);
  if (p->dtype == POOLSPEC_F32 && p->channels > 32 && p->channels % 32 == 16) nudge_channel(p, out, 47, 0);
  return status;
}

static int half_vector_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                           int64_t* indices, char* message, size_t size) {
  const int status = minimal_run(self, p, in, out, indices, message, size);
  if (p->dtype == POOLSPEC_F32 && p->channels % 16 >= 10 && p->channels % 16 <= 14)
    nudge_channel(p, out, p->channels - 1, 0);
  return status;
}

static int byte_vectors_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                            int64_t* indices, char* message, size_t size) {
  const int status = minimal_run(self, p, in, out, indices, message, size);
  if (p->channels > 65 && p->dtype == POOLSPEC_I8) nudge_channel(p, out, 65, 127);
  return status;
}

static int wide_average_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                            int64_t* indices, char* message, size_t size) {
  const int status = minimal_run(self, p, in, out, indices, message, size);
  const poolspec_axis* w = &p->axes[p->spatial_rank - 1];
  if (p->op != POOLSPEC_AVG || p->dtype != POOLSPEC_F32 || w->extent < 64) return status;
  int64_t taps = 1;
  for (int a = 0; a < p->spatial_rank; ++a) taps *= p->axes[a].kernel;
  for (int64_t row = 0; row < p->batch * p->channels * plane_size(p, 1) / w->output; ++row) {
    float* last = (float*)out + (row + 1) * w->output - 1;
    *last = (float)(*last * (double)taps / (double)(taps + 1));
  }
  return status;
}

/* x rounded to f16 (11 significant bits, subnormals below 2^-14, infinite above 65504). */
static double to_f16(double x) {
  if (!isfinite(x) || x == 0) return x;
  if (fabs(x) >= 65520) return x > 0 ? INFINITY : -INFINITY;
  int e;
  frexp(x, &e);
  const double quantum = ldexp(1.0, (e - 11 < -24 ? -24 : e - 11));
  return nearbyint(x / quantum) * quantum;
}

static int large_window_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                            int64_t* indices, char* message, size_t size) {
  int64_t taps = 1;
  for (int a = 0; a < p->spatial_rank; ++a) taps *= p->axes[a].kernel;
  if (p->op != POOLSPEC_AVG || p->dtype != POOLSPEC_F32 || taps <= 100 || p->bias != 0)
    return minimal_run(self, p, in, out, indices, message, size);
  /* The minimal backend's window walk, with every partial sum rounded to f16. */
  const int64_t outputs = plane_size(p, 1);
  int64_t o[POOLSPEC_MAX_SPATIAL] = {0};
  for (int64_t plane = 0, at = 0; plane < p->batch * p->channels; ++plane)
    for (int64_t i = 0; i < outputs; ++i, ++at) {
      int64_t t[POOLSPEC_MAX_SPATIAL] = {0}, in_bounds = 0;
      double sum = 0;
      for (int64_t tap = 0; tap < taps; ++tap) {
        int64_t offset = 0, ok = 1;
        for (int a = 0; a < p->spatial_rank; ++a) {
          const poolspec_axis* x = &p->axes[a];
          const int64_t pos = o[a] * x->stride - x->pad_begin + t[a] * x->dilation;
          ok = ok && pos >= 0 && pos < x->extent;
          offset = offset * x->extent + pos;
        }
        if (ok) {
          sum = to_f16(sum + load(p, in, plane * plane_size(p, 0) + offset));
          ++in_bounds;
        }
        for (int a = p->spatial_rank - 1; a >= 0 && ++t[a] == p->axes[a].kernel; --a) t[a] = 0;
      }
      const double exact = window(p, in, plane, o);
      /* The divisor the minimal backend used, recovered from its exact mean's window. */
      double d = (double)taps;
      if (p->divisor == POOLSPEC_EXCLUDE) d = (double)in_bounds;
      if (p->divisor == POOLSPEC_OVERRIDE) d = (double)p->divisor_override;
      store(p, out, at, isnan(exact) || d == 0 || p->divisor == POOLSPEC_INCLUDE_CLIP ? exact : sum / d);
      for (int a = p->spatial_rank - 1; a >= 0 && ++o[a] == p->axes[a].output; --a) o[a] = 0;
    }
  return 0;
}

static int override_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                        int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  if (q.divisor == POOLSPEC_OVERRIDE) q.divisor = POOLSPEC_EXCLUDE;
  return minimal_run(self, &q, in, out, indices, message, size);
}

static int dilation3_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                         int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  poolspec_axis* w = &q.axes[q.spatial_rank - 1];
  if (w->dilation >= 3) --w->dilation;
  return minimal_run(self, &q, in, out, indices, message, size);
}

static int rank3_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                     int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  if (q.spatial_rank == 3) q.axes[0].pad_end = 0;
  return minimal_run(self, &q, in, out, indices, message, size);
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* The spec's output extents (docs/semantics.md, shape rules), but max(0, span): never fewer than
 * one output. Refuses zero attributes and windows that start in the padding before the input. */
static int shape_never_empty(const poolspec_backend* self, const poolspec_problem* p, int64_t* extents, char* reason,
                             size_t size) {
  (void)self;
  for (int i = 0; i < p->spatial_rank; ++i) {
    const poolspec_axis* a = &p->axes[i];
    const int64_t window = (a->kernel - 1) * a->dilation + 1;
    if (a->kernel < 1 || a->stride < 1 || a->dilation < 1 || a->pad_begin < 0 || a->pad_end < 0 ||
        (p->empty_window == POOLSPEC_EMPTY_ERROR && (a->pad_begin >= window || a->pad_end >= window))) {
      snprintf(reason, size, "axis %d: attributes refused", i);
      return 0;
    }
    int64_t span = a->extent + a->pad_begin + a->pad_end - window;
    if (span < 0) span = 0; /* the bug */
    int64_t o = floor_div(span, a->stride) + 1;
    if (p->rounding != POOLSPEC_FLOOR) o = -floor_div(-span, a->stride) + 1;
    if (p->rounding == POOLSPEC_CEIL_TORCH && (o - 1) * a->stride >= a->extent + a->pad_begin) --o;
    extents[i] = o;
  }
  return 1;
}

#define BLIND(name, run) \
  { POOLSPEC_BACKEND_ABI_VERSION, name, "1.0", "spec", {POOLSPEC_F64, 1, 1.0, 0}, NULL, minimal_supports, run, NULL, NULL }

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend blind[] = {
      BLIND("blind-nan-body", nan_body_run),         BLIND("blind-all-nan", all_nan_run),
      BLIND("blind-channels-48", channels_48_run),   BLIND("blind-wide-average", wide_average_run),
      BLIND("blind-large-window", large_window_run), BLIND("blind-override", override_run),
      BLIND("blind-dilation3", dilation3_run),       BLIND("blind-rank3", rank3_run),
      BLIND("blind-half-vector", half_vector_run),   BLIND("blind-byte-vectors", byte_vectors_run),
      {POOLSPEC_BACKEND_ABI_VERSION, "blind-shape", "1.0", "spec", {POOLSPEC_F64, 1, 1.0, 0}, NULL, minimal_supports,
       minimal_run, NULL, shape_never_empty}};
  return index < sizeof blind / sizeof blind[0] ? &blind[index] : NULL;
}
