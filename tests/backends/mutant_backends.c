/* Mutant backends: the minimal backend (minimal_backend.c) with one bug each, for the tests that
 * show `poolspec certify` reports every kind of bug with the right status (issue: certify).
 *   mutant-border-divisor  an average's first window of each row divided by one more     FAIL
 *   mutant-end-pads        pads_end ignored in the include_clip divisor                    FAIL
 *   mutant-ties            integer ties rounded away from zero where the rule says even    FAIL
 *   mutant-write-past      one element written past the output                             OUT-OF-BOUNDS
 *   mutant-crash           aborts on 17 channels                                           CRASH
 *   mutant-hang            never returns on a 1-D max of batch 2                          HANG
 *   mutant-unwritten       leaves the first output element as it found it                 UNWRITTEN
 *   mutant-loose-sums      claims StableHLO's rules; float averages 12 ulps toward zero,  FAIL
 *                          within the loose bound it declares (f32 sums, 16 more roundings,
 *                          4 ulps) but not StableHLO's (sums in f32 in any order, one division)
 *   mutant-no-bias         an average's bias left out                                     FAIL
 *   mutant-previous-image  images from the third on given the previous image's output     FAIL
 *   mutant-floor-for-trunc round=toward_zero computed as floor                            FAIL
 *   mutant-zeros-equal     zeros=ordered computed as equal: a -0 first keeps the lead      FAIL
 * (the last four are fields no translation of a suite case to these backends' rules sets:
 * suite.cpp's add_fields asks them)
 * expect: FAIL|OUT-OF-BOUNDS|CRASH|HANG|UNWRITTEN
 * args: --filter shapes/1d:ic_tail,regressions/int8_average_ties
 */
#define poolspec_backend_entry minimal_backend_entry
#include "minimal_backend.c"
#undef poolspec_backend_entry

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static int64_t output_elements(const poolspec_problem* p) {
  int64_t n = p->batch * p->channels;
  for (int a = 0; a < p->spatial_rank; ++a) n *= p->axes[a].output;
  return n;
}

static int element_bytes(const poolspec_problem* p) { return p->dtype == POOLSPEC_F32 ? 4 : 1; }

static int border_divisor_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                              int64_t* indices, char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  const poolspec_axis* w = &p->axes[p->spatial_rank - 1];
  if (p->op != POOLSPEC_AVG || w->pad_begin == 0) return 0;
  for (int64_t row = 0; row < output_elements(p) / w->output; ++row) { /* sum/d -> sum/(d+1) */
    const int64_t at = row * w->output;
    const double v = load(p, out, at);
    int64_t d = 1;
    for (int a = 0; a < p->spatial_rank; ++a) d *= p->axes[a].kernel;
    store(p, out, at, p->dtype == POOLSPEC_F32 ? v * (double)d / (double)(d + 1) : v);
  }
  return 0;
}

static int end_pads_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                        int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  for (int a = 0; a < q.spatial_rank; ++a) q.axes[a].pad_end = 0;
  return minimal_run(self, &q, in, out, indices, message, size);
}

static int ties_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                    int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  if (q.int_rounding == POOLSPEC_HALF_EVEN) q.int_rounding = POOLSPEC_HALF_AWAY;
  return minimal_run(self, &q, in, out, indices, message, size);
}

static int write_past_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                          int64_t* indices, char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  memset((char*)out + output_elements(p) * element_bytes(p), 0, (size_t)element_bytes(p));
  return 0;
}

static int crash_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                     int64_t* indices, char* message, size_t size) {
  if (p->channels == 17) abort();
  return minimal_run(self, p, in, out, indices, message, size);
}

static int hang_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                    int64_t* indices, char* message, size_t size) {
  if (p->spatial_rank == 1 && p->batch == 2 && p->op == POOLSPEC_MAX)
    for (;;) pause();
  return minimal_run(self, p, in, out, indices, message, size);
}

static int unwritten_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                         int64_t* indices, char* message, size_t size) {
  unsigned char first[4];
  memcpy(first, out, (size_t)element_bytes(p));
  minimal_run(self, p, in, out, indices, message, size);
  memcpy(out, first, (size_t)element_bytes(p));
  return 0;
}

static int loose_sums_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                          int64_t* indices, char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  if (p->op != POOLSPEC_AVG || p->dtype != POOLSPEC_F32) return 0;
  /* The declared bound allows at least (K + 16) / 2 + 4 >= 12.5 ulps (the window's absolute mean
   * is at least |y|); StableHLO's, between K / 2 + 1/2 and K + 1/2 ulps (after where y sits in its
   * binade) where a window's values share a sign. Toward zero, so a step past a binade edge is a
   * smaller one. */
  float* y = (float*)out;
  for (int64_t i = 0; i < output_elements(p); ++i)
    if (isfinite(y[i]) && y[i] != 0)
      for (int step = 0; step < 12; ++step) y[i] = nextafterf(y[i], 0.0f);
  return 0;
}

static int no_bias_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                       int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  q.bias = 0;
  return minimal_run(self, &q, in, out, indices, message, size);
}

static int previous_image_run(const poolspec_backend* self, const poolspec_problem* p, const void* in,
                              void* out, int64_t* indices, char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  const int64_t image = output_elements(p) / p->batch * element_bytes(p);
  for (int64_t n = 2; n < p->batch; ++n) memcpy((char*)out + n * image, (char*)out + (n - 1) * image, (size_t)image);
  return 0;
}

static int floor_for_trunc_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                               int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  if (q.int_rounding == POOLSPEC_TOWARD_ZERO) q.int_rounding = POOLSPEC_ROUND_FLOOR;
  return minimal_run(self, &q, in, out, indices, message, size);
}

static int zeros_equal_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                           int64_t* indices, char* message, size_t size) {
  poolspec_problem q = *p;
  q.zeros = POOLSPEC_ZEROS_EQUAL;
  return minimal_run(self, &q, in, out, indices, message, size);
}

#define MUTANT(name, run) \
  { POOLSPEC_BACKEND_ABI_VERSION, name, "1.0", "spec", {POOLSPEC_F64, 1, 1.0, 0}, NULL, minimal_supports, run, NULL, NULL }

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend mutants[] = {
      MUTANT("mutant-border-divisor", border_divisor_run), MUTANT("mutant-end-pads", end_pads_run),
      MUTANT("mutant-ties", ties_run),                     MUTANT("mutant-write-past", write_past_run),
      MUTANT("mutant-crash", crash_run),                   MUTANT("mutant-hang", hang_run),
      MUTANT("mutant-unwritten", unwritten_run),           MUTANT("mutant-no-bias", no_bias_run),
      MUTANT("mutant-previous-image", previous_image_run), MUTANT("mutant-floor-for-trunc", floor_for_trunc_run),
      MUTANT("mutant-zeros-equal", zeros_equal_run),
      {POOLSPEC_BACKEND_ABI_VERSION, "mutant-loose-sums", "1.0", "stablehlo", {POOLSPEC_F32, 16, 4.0, 0}, NULL,
       minimal_supports, loose_sums_run, NULL, NULL}};
  return index < sizeof mutants / sizeof mutants[0] ? &mutants[index] : NULL;
}
