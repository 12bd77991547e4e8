/* Backends that claim TOSA's rules: the minimal backend (minimal_backend.c) behind TOSA's checks,
 * and mutants that drop one check each, for the test that certify holds a backend to refusing
 * what its rules refuse (docs/certification.md, "Invalid problems").
 *   tosa-checked           refuses every problem TOSA's AVG_POOL2D / MAX_POOL2D refuse   PASS
 *   tosa-accepts-inexact   runs windows that do not fit exactly (idiv_check)             FAIL
 *   tosa-pads-unchecked    runs pads as long as the kernel                               FAIL
 *   tosa-crash-past-level  aborts on a kernel or stride past the 8K level                CRASH
 *   tosa-float-freedoms    tosa-checked, then every subnormal result flushed to +0 and     PASS
 *                          every zero's sign flipped: what TOSA's floating-point rules
 *                          allow (zeros=either, subnormals=may_flush), and no other rules
 * f32 only (TOSA's int8 division is not computed), NCHW only (the minimal backend's layout). */
#define poolspec_backend_entry minimal_backend_entry
#include "minimal_backend.c"
#undef poolspec_backend_entry

#include <float.h>
#include <math.h>
#include <stdlib.h>

enum { check_fit = 1, check_pads = 2, check_level = 4, all_checks = 7 };
enum { tosa_max_kernel = 8192, tosa_max_stride = 8192 }; /* the 8K level */

static int tosa_supports(const poolspec_problem* p, int checks, char* reason, size_t size) {
  if (p->dtype != POOLSPEC_F32) {
    snprintf(reason, size, "dtype %d: only f32", p->dtype);
    return 0;
  }
  if (!minimal_supports(NULL, p, reason, size)) return 0;
  if (p->spatial_rank != 2) {
    snprintf(reason, size, "spatial rank %d: AVG_POOL2D and MAX_POOL2D take 2", p->spatial_rank);
    return 0;
  }
  if (p->op == POOLSPEC_AVG && p->divisor != POOLSPEC_EXCLUDE) {
    snprintf(reason, size, "TOSA never counts padding");
    return 0;
  }
  if (p->op == POOLSPEC_MAX && p->max_start != POOLSPEC_MAX_FROM_FIRST) {
    snprintf(reason, size, "TOSA's max is the window's maximum");
    return 0;
  }
  for (int a = 0; a < 2; ++a) {
    const poolspec_axis* x = &p->axes[a];
    if (x->dilation != 1) {
      snprintf(reason, size, "axis %d: TOSA has no dilation", a);
      return 0;
    }
    if ((checks & check_level) && (x->kernel > tosa_max_kernel || x->stride > tosa_max_stride)) {
      snprintf(reason, size, "axis %d: past the 8K level", a);
      return 0;
    }
    if ((checks & check_pads) && (x->pad_begin >= x->kernel || x->pad_end >= x->kernel)) {
      snprintf(reason, size, "axis %d: a pad as long as the kernel", a);
      return 0;
    }
    const int64_t span = x->extent + x->pad_begin + x->pad_end - x->kernel;
    if ((checks & check_fit) && (span < 0 || span % x->stride != 0)) {
      snprintf(reason, size, "axis %d: the windows do not fit exactly", a);
      return 0;
    }
  }
  return 1;
}

static int checked_supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self;
  return tosa_supports(p, all_checks, reason, size);
}

static int inexact_supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self;
  return tosa_supports(p, all_checks & ~check_fit, reason, size);
}

static int pads_supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self;
  return tosa_supports(p, all_checks & ~check_pads, reason, size);
}

static int level_supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self;
  return tosa_supports(p, all_checks & ~check_level, reason, size);
}

static int level_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                     int64_t* indices, char* message, size_t size) {
  for (int a = 0; a < p->spatial_rank; ++a)
    if (p->axes[a].kernel > tosa_max_kernel || p->axes[a].stride > tosa_max_stride) abort();
  return minimal_run(self, p, in, out, indices, message, size);
}

static int freedoms_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                        int64_t* indices, char* message, size_t size) {
  const int status = minimal_run(self, p, in, out, indices, message, size);
  int64_t n = p->batch * p->channels;
  for (int a = 0; a < p->spatial_rank; ++a) n *= p->axes[a].output;
  float* y = (float*)out; /* tosa_supports takes f32 only */
  for (int64_t i = 0; i < n; ++i) {
    if (y[i] != 0 && fabsf(y[i]) < FLT_MIN) y[i] = 0.0f;
    else if (y[i] == 0) y[i] = signbit(y[i]) ? 0.0f : -0.0f;
  }
  return status;
}

#define TOSA_BACKEND(name, supports, run) \
  { POOLSPEC_BACKEND_ABI_VERSION, name, "1.0", "tosa", {POOLSPEC_F64, 1, 1.0, 0}, NULL, supports, run, NULL, NULL }

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend backends[] = {
      TOSA_BACKEND("tosa-checked", checked_supports, minimal_run),
      TOSA_BACKEND("tosa-accepts-inexact", inexact_supports, minimal_run),
      TOSA_BACKEND("tosa-pads-unchecked", pads_supports, minimal_run),
      TOSA_BACKEND("tosa-crash-past-level", level_supports, level_run),
      TOSA_BACKEND("tosa-float-freedoms", checked_supports, freedoms_run)};
  return index < sizeof backends / sizeof backends[0] ? &backends[index] : NULL;
}
