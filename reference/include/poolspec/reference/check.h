/* Linked-in checks, C API (docs/design.md §6): a library verifies an output it computed
 * against poolspec's reference -- every element, or K sampled elements per call on a fraction
 * of the calls -- and gets the first mismatch. Thread-safe: one checker may be shared by every
 * thread. Link poolspec::reference (CMake: find_package(poolspec)). */
#ifndef POOLSPEC_REFERENCE_CHECK_H
#define POOLSPEC_REFERENCE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "poolspec/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct poolspec_check_options {
  int64_t
      samples;   /* output elements checked per checked call (half of them on the border); 0: all */
  double rate;   /* fraction of calls checked, in (0, 1]; spread evenly over the calls */
  uint64_t seed; /* of the sample choice */
  poolspec_accumulation accumulation; /* how the caller computes (backend.h): the tolerance */
} poolspec_check_options;

/* samples 16, rate 1/64, seed 0, exact float averages. */
poolspec_check_options poolspec_check_default_options(void);

typedef struct poolspec_mismatch {
  int32_t rank;                                 /* entries of coordinate: 2 + spatial rank */
  int64_t coordinate[2 + POOLSPEC_MAX_SPATIAL]; /* (n, c, o1..on) */
  double expected, got, allowed;                /* allowed: the derived tolerance */
  int64_t expected_index, got_index;            /* max with indices, else -1 */
  char message[512];                            /* all of the above in words, with the problem */
} poolspec_mismatch;

typedef struct poolspec_checker poolspec_checker;

/* NULL when the options are out of range: a rate outside (0, 1], or an accumulation outside
 * backend.h's ranges (a declaration is validated, never trusted). options NULL: defaults. */
poolspec_checker* poolspec_checker_create(const poolspec_check_options* options);
void poolspec_checker_destroy(poolspec_checker* checker);

/* 0: the call was not sampled, or every checked element matches; 1: a mismatch, the first in
 * *mismatch (may be NULL); 2: the problem or a buffer is invalid, or the declared accumulation
 * cannot bound this problem (sums narrower than its data, or f16 sums under sums=f32), the reason
 * in mismatch->message.
 * indices: the caller's max indices (output's layout), or NULL when the problem has none. */
int poolspec_check(poolspec_checker* checker, const poolspec_problem* problem, const void* input,
                   const void* output, const int64_t* indices, poolspec_mismatch* mismatch);

typedef struct poolspec_check_stats {
  int64_t calls, checked_calls, checked_elements, mismatching_calls;
} poolspec_check_stats;
poolspec_check_stats poolspec_checker_stats(const poolspec_checker* checker);

#ifdef __cplusplus
}
#endif

#endif /* POOLSPEC_REFERENCE_CHECK_H */
