/* A complete minimal poolspec backend (docs/certification.md, "A minimal backend"): f32 and int8
 * average and max pooling of any rank, NCHW, written from backend.h alone. Build and certify it with
 *     cc -std=c11 -O2 -shared -fPIC -I<poolspec>/check/include minimal_backend.c -o libminimal.so
 *     poolspec certify --backend ./libminimal.so */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poolspec/backend.h"

static int minimal_supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self;
  if (p->dtype != POOLSPEC_F32 && p->dtype != POOLSPEC_I8) {
    snprintf(reason, size, "dtype %d: only f32 and i8", p->dtype);
    return 0;
  }
  if (p->layout != POOLSPEC_NCHW) {
    snprintf(reason, size, "layout nhwc: only nchw");
    return 0;
  }
  if (p->op == POOLSPEC_MAX && p->indices != POOLSPEC_INDICES_NONE) {
    snprintf(reason, size, "max indices: not computed");
    return 0;
  }
  if (p->int_rounding == POOLSPEC_TOSA_DIVISION || p->input_zp != 0 || p->output_zp != 0) {
    snprintf(reason, size, "TOSA's integer average: not computed");
    return 0;
  }
  return 1;
}

static double load(const poolspec_problem* p, const void* base, int64_t i) {
  if (p->dtype == POOLSPEC_F32) return ((const float*)base)[i];
  return ((const signed char*)base)[i];
}

static void store(const poolspec_problem* p, void* base, int64_t i, double v) {
  if (p->dtype == POOLSPEC_F32) ((float*)base)[i] = (float)v;
  else ((signed char*)base)[i] = (signed char)v;
}

/* An exact integer mean (sum / d, d > 0) rounded by the problem's rule, saturated to int8. */
static double round_mean(const poolspec_problem* p, double sum, double d) {
  double q = floor(sum / d), r = sum - q * d; /* floor quotient, 0 <= r < d */
  if (r != 0) {
    switch (p->int_rounding) {
      case POOLSPEC_HALF_EVEN: q += 2 * r > d || (2 * r == d && fmod(q, 2) != 0); break;
      case POOLSPEC_HALF_AWAY: q += 2 * r > d || (2 * r == d && q >= 0); break;
      case POOLSPEC_HALF_UP: q += 2 * r >= d; break;
      case POOLSPEC_TOWARD_ZERO: q += q < 0; break;
      default: break; /* POOLSPEC_ROUND_FLOOR */
    }
  }
  return q < -128 ? -128 : q > 127 ? 127 : q;
}

static double empty_value(const poolspec_problem* p) {
  switch (p->empty_window) {
    case POOLSPEC_EMPTY_NAN: return NAN;
    case POOLSPEC_EMPTY_NEG_INF: return p->dtype == POOLSPEC_F32 ? -INFINITY : -128;
    case POOLSPEC_EMPTY_LOWEST: return p->dtype == POOLSPEC_F32 ? -3.4028234663852886e38 : -128;
    default: return 0;
  }
}

/* One output element: the window of output coordinate o[] in plane `plane`. */
static double window(const poolspec_problem* p, const void* in, int64_t plane, const int64_t* o) {
  const int n = p->spatial_rank;
  int64_t t[POOLSPEC_MAX_SPATIAL] = {0}, taps = 1, in_bounds = 0, clipped = 1, plane_size = 1;
  double sum = (double)p->bias, best = p->dtype == POOLSPEC_F32 ? -3.4028234663852886e38 : -128;
  int have = 0, nan = 0;
  for (int a = 0; a < n; ++a) {
    const poolspec_axis* x = &p->axes[a];
    const int64_t start = o[a] * x->stride - x->pad_begin;
    int64_t inside = 0; /* taps inside [-pad_begin, extent + pad_end) on this axis */
    for (int64_t k = 0; k < x->kernel; ++k) {
      const int64_t at = start + k * x->dilation;
      inside += at >= -x->pad_begin && at < x->extent + x->pad_end;
    }
    clipped *= inside;
    taps *= x->kernel;
    plane_size *= x->extent;
  }
  for (int64_t tap = 0; tap < taps; ++tap) { /* row-major over the kernel offsets */
    int64_t offset = 0, ok = 1;
    for (int a = 0; a < n; ++a) {
      const poolspec_axis* x = &p->axes[a];
      const int64_t at = o[a] * x->stride - x->pad_begin + t[a] * x->dilation;
      ok = ok && at >= 0 && at < x->extent;
      offset = offset * x->extent + at;
    }
    if (ok) {
      const double v = load(p, in, plane * plane_size + offset);
      ++in_bounds;
      sum += v;
      if (isnan(v)) nan = 1;
      else if (!have && p->max_start != POOLSPEC_MAX_FROM_LOWEST) best = v;
      else if (v > best || (p->zeros == POOLSPEC_ZEROS_ORDERED && v == 0 && best == 0 && !signbit(v))) best = v;
      have = have || !isnan(v);
    }
    for (int a = n - 1; a >= 0 && ++t[a] == p->axes[a].kernel; --a) t[a] = 0;
  }
  if (p->op == POOLSPEC_MAX) {
    if (in_bounds == 0) return empty_value(p);
    if (p->max_start == POOLSPEC_MAX_FROM_LOWEST) return best;
    return nan && (p->nan_policy == POOLSPEC_NAN_PROPAGATE || !have) ? NAN : best;
  }
  const int64_t d = p->divisor == POOLSPEC_EXCLUDE ? in_bounds
                    : p->divisor == POOLSPEC_INCLUDE_CLIP ? clipped
                    : p->divisor == POOLSPEC_INCLUDE_FULL ? taps : p->divisor_override;
  if (d == 0) return empty_value(p);
  return p->dtype == POOLSPEC_F32 ? sum / (double)d : round_mean(p, sum, (double)d);
}

static int minimal_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                       int64_t* indices, char* message, size_t size) {
  (void)self, (void)indices, (void)message, (void)size;
  int64_t o[POOLSPEC_MAX_SPATIAL] = {0}, outputs = 1, at = 0;
  for (int a = 0; a < p->spatial_rank; ++a) outputs *= p->axes[a].output;
  for (int64_t plane = 0; plane < p->batch * p->channels; ++plane)
    for (int64_t i = 0; i < outputs; ++i, ++at) {
      store(p, out, at, window(p, in, plane, o));
      for (int a = p->spatial_rank - 1; a >= 0 && ++o[a] == p->axes[a].output; --a) o[a] = 0;
    }
  return 0;
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend minimal = {
      POOLSPEC_BACKEND_ABI_VERSION, "minimal", "1.0", "spec",
      /* double sums, one division, one rounding into f32 */
      {POOLSPEC_F64, 1, 1.0, 0}, NULL, minimal_supports, minimal_run, NULL,
      NULL /* no output_shape: the spec's shape rule is the only one it has */};
  return index == 0 ? &minimal : NULL;
}
