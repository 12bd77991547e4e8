/* The poolspec backend ABI (docs/design.md §6), plain C, versioned.
 *
 * A backend is a shared library exporting one function,
 *
 *     const poolspec_backend* poolspec_backend_entry(uint32_t index);
 *
 * which returns the index-th backend the library provides (index 0, 1, ...; at most 64) and NULL
 * past the last. `poolspec certify --backend ./libmine.so` loads it in a worker process of its
 * own, asks `supports` for every problem of a suite, calls `run` twice on each problem it
 * accepts, one call after another as a program would, and compares what `run` writes with the
 * spec. The in-tree engines (reference, optimized, xs3) and the adapters for oneDNN, XNNPACK and
 * libtorch are backends through this same struct.
 *
 * Version 2: version 1's struct with `output_shape` after its last member. A library built against
 * version 1 (the struct without it) loads as it did: poolspec reads output_shape only from a struct
 * that declares version 2 or later.
 * Version 3: the backend struct is version 2's; the problem gains TOSA's integer average
 * (`input_zp` and `output_zp` after `text`, and int_rounding POOLSPEC_TOSA_DIVISION). A backend
 * that declares version 1 or 2 is never asked to support or run a problem that needs them (a
 * nonzero zero point or that rounding): it could not know what they mean, so such a problem counts
 * as unsupported, with that reason.
 * Version 4: the backend struct is version 2's; the problem gains `zeros` and `subnormals` after
 * `output_zp`: how a float result treats -0 and +0, and whether a subnormal result may be
 * flushed to zero (POOLSPEC_ZEROS_EQUAL and POOLSPEC_SUBNORMALS_EXACT are what every problem
 * meant before). A backend that declares version 1, 2 or 3 is never asked a problem with
 * POOLSPEC_ZEROS_ORDERED (a max that orders -0 below +0); POOLSPEC_ZEROS_EITHER and
 * POOLSPEC_SUBNORMALS_MAY_FLUSH only allow more results, asking nothing of a backend that it did
 * not already do, so those problems reach every version.
 * Version 5: the backend struct is version 2's; the problem gains `sums` after `subnormals`: the
 * narrowest format a float average's sums may be rounded to (TOSA's acc_type). POOLSPEC_SUMS_F32
 * asks nothing of a backend's results; it refuses a declaration of POOLSPEC_F16 sums for that
 * problem, whatever the backend's version, since sums so declared are not the ones the rules ask
 * for. Every version is asked it. Any other version is refused by name and number. */
#ifndef POOLSPEC_BACKEND_H
#define POOLSPEC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POOLSPEC_BACKEND_ABI_VERSION 5u
#define POOLSPEC_BACKEND_ABI_VERSION_1 1u /* the struct ends at `context` */
#define POOLSPEC_BACKEND_ABI_VERSION_2 2u /* problems without zero points or TOSA's division */
#define POOLSPEC_BACKEND_ABI_VERSION_3 3u /* problems without zeros=ordered */
#define POOLSPEC_BACKEND_ABI_VERSION_4 4u /* problems without sums */
#define POOLSPEC_BACKEND_ENTRY "poolspec_backend_entry"
#define POOLSPEC_MAX_SPATIAL 8

/* The problem model (docs/design.md §2), one field per choice; every value below is the
 * spec's own (docs/semantics.md, "The problem model"). Names match the problem string's words. */
enum poolspec_op { POOLSPEC_AVG = 0, POOLSPEC_MAX = 1 };
enum poolspec_dtype {
  POOLSPEC_F64 = 0,
  POOLSPEC_F32 = 1,
  POOLSPEC_F16 = 2,
  POOLSPEC_BF16 = 3,
  POOLSPEC_I32 = 4,
  POOLSPEC_I8 = 5,
  POOLSPEC_U8 = 6
};
enum poolspec_rounding { POOLSPEC_FLOOR = 0, POOLSPEC_CEIL = 1, POOLSPEC_CEIL_TORCH = 2 };
enum poolspec_divisor {
  POOLSPEC_EXCLUDE = 0,
  POOLSPEC_INCLUDE_CLIP = 1,
  POOLSPEC_INCLUDE_FULL = 2,
  POOLSPEC_OVERRIDE = 3
};
enum poolspec_empty_window {
  POOLSPEC_EMPTY_ERROR = 0,
  POOLSPEC_EMPTY_ZERO = 1,
  POOLSPEC_EMPTY_NAN = 2,
  POOLSPEC_EMPTY_LOWEST = 3,
  POOLSPEC_EMPTY_NEG_INF = 4
};
enum poolspec_nan_policy { POOLSPEC_NAN_PROPAGATE = 0, POOLSPEC_NAN_IGNORE = 1 };
enum poolspec_int_rounding {
  POOLSPEC_HALF_EVEN = 0,
  POOLSPEC_HALF_AWAY = 1,
  POOLSPEC_HALF_UP = 2,
  POOLSPEC_TOWARD_ZERO = 3,
  POOLSPEC_ROUND_FLOOR = 4,
  POOLSPEC_TOSA_DIVISION = 5 /* version 3: TOSA's reciprocal_scale, then apply_scale_32 */
};
enum poolspec_indices {
  POOLSPEC_INDICES_NONE = 0,
  POOLSPEC_INDICES_PLANE = 1,
  POOLSPEC_INDICES_TENSOR = 2
};
enum poolspec_index_order { POOLSPEC_ROW_MAJOR = 0, POOLSPEC_COLUMN_MAJOR = 1 };
enum poolspec_max_start { POOLSPEC_MAX_FROM_FIRST = 0, POOLSPEC_MAX_FROM_LOWEST = 1 };
/* Version 4. A float result and the two zeros. EQUAL: -0 == +0, a max's tie goes to the first
 * value in scan order. ORDERED: a max orders -0 below +0 (IEEE 754-2019 maximum, StableHLO's).
 * EITHER: as EQUAL, but a zero result may carry either sign (TOSA leaves it unspecified); never
 * with indices. Integer problems are EQUAL. */
enum poolspec_zeros {
  POOLSPEC_ZEROS_EQUAL = 0,
  POOLSPEC_ZEROS_ORDERED = 1,
  POOLSPEC_ZEROS_EITHER = 2
};
/* Version 4. EXACT: subnormal results as the rules give them. MAY_FLUSH: a subnormal result may
 * be returned as a zero (TOSA permits flushing subnormal outputs). Integer problems are EXACT. */
enum poolspec_subnormals { POOLSPEC_SUBNORMALS_EXACT = 0, POOLSPEC_SUBNORMALS_MAY_FLUSH = 1 };
/* Version 5. The narrowest format a float average's sums may be rounded to. DATA: the data's own.
 * F32: f32 or wider (TOSA AVG_POOL2D's acc_type FP32 on f16 or bf16 data), so a declaration of
 * POOLSPEC_F16 sums is refused for it. Only f16 and bf16 averages are F32; every other problem is
 * DATA. */
enum poolspec_sums { POOLSPEC_SUMS_DATA = 0, POOLSPEC_SUMS_F32 = 1 };
/* Memory order of input, output and indices: (N, C, d1..dn) or (N, d1..dn, C), dense. */
enum poolspec_layout { POOLSPEC_NCHW = 0, POOLSPEC_NHWC = 1 };

typedef struct poolspec_axis {
  int64_t extent, kernel, stride, dilation; /* dilation 1 = none */
  int64_t pad_begin, pad_end;
  int64_t output; /* the output extent, from the spec's shape rules; -1 in output_shape's
                     question (the backend says it) */
} poolspec_axis;

typedef struct poolspec_problem {
  int32_t op, dtype; /* output dtype = input dtype */
  int64_t batch, channels;
  int32_t spatial_rank; /* 1 .. POOLSPEC_MAX_SPATIAL */
  poolspec_axis axes[POOLSPEC_MAX_SPATIAL];
  int32_t rounding, divisor;
  int64_t divisor_override; /* > 0 exactly when divisor == POOLSPEC_OVERRIDE */
  int64_t bias;             /* avg: (bias + window sum) / divisor */
  int32_t empty_window, nan_policy, int_rounding, indices, index_order;
  int64_t index_axis;
  int32_t max_start;
  int32_t layout;
  const char* text; /* the same problem as a problem string, for messages */
  /* Version 3. An integer average's zero points (TOSA's input_zp, output_zp), 0 otherwise:
   * input_zp is subtracted from each input value summed, output_zp added to the rounded quotient
   * before it is saturated to the dtype. */
  int64_t input_zp, output_zp;
  int32_t zeros;      /* version 4: enum poolspec_zeros */
  int32_t subnormals; /* version 4: enum poolspec_subnormals */
  int32_t sums;       /* version 5: enum poolspec_sums */
} poolspec_problem;

/* How a backend's float averages are computed, from which the runner derives the tolerance
 * (docs/design.md §5): for a window of K taps whose absolute sum is A and divisor d, a result
 * may differ from the exact one by gamma(K + extra_operations) * A / d plus output_ulps ulps of
 * the result, with gamma(n) = n u / (1 - n u) for the unit roundoff u of sum_format.
 * sum_format POOLSPEC_EXACT_SUMS: correctly rounded (the tolerance is 0). Max results and integer
 * averages are compared bit for bit, or within integer_units for an approximate integer divide;
 * a problem's zeros=either and subnormals=may_flush accept the zeros they allow besides. */
#define POOLSPEC_EXACT_SUMS (-1)
typedef struct poolspec_accumulation {
  int32_t sum_format;       /* POOLSPEC_EXACT_SUMS, POOLSPEC_F64, POOLSPEC_F32 or POOLSPEC_F16 (no
                               sums narrower than the data: POOLSPEC_F32 not for an f64 average,
                               POOLSPEC_F16 for f16 data only, and not under POOLSPEC_SUMS_F32) */
  int32_t extra_operations; /* 0..16: roundings besides the K - 1 additions: 1 for a division, 2
                               for times-the-reciprocal, +1 for a bias */
  double output_ulps;       /* 0..4: 0.5 when the quotient is rounded once into the output dtype */
  int64_t integer_units;    /* 0 or 1: integer averages' allowed |got - exact| (0: bit-exact).
                               A declaration outside these ranges is refused at load. */
} poolspec_accumulation;

typedef struct poolspec_backend poolspec_backend;
struct poolspec_backend {
  uint32_t abi_version; /* POOLSPEC_BACKEND_ABI_VERSION */
  const char* name;     /* 1 to 64 characters of A-Z a-z 0-9 . _ + -, unique in the library */
  const char* version;  /* free text: "1.4.2 (avx512)" */
  /* The framework rules the backend claims to follow, which `certify` holds it to: "openvino",
   * "ngraph", "onnx", "pytorch", "tensorflow", "tflite", "onednn", "opencv", "armnn", "tosa",
   * "stablehlo", "xs3", or
   * "spec" (any problem of the model, under each framework's rules in turn). */
  const char* rules;
  poolspec_accumulation accumulation;
  /* Optional (NULL: `accumulation` for every problem): the accumulation for one problem. */
  void (*accumulation_for)(const poolspec_backend* self, const poolspec_problem* problem,
                           poolspec_accumulation* out);
  /* 1 when the backend computes this problem in this layout; 0 to refuse, with a reason
   * (NUL-terminated, at most reason_size bytes) that the report shows. */
  int (*supports)(const poolspec_backend* self, const poolspec_problem* problem, char* reason,
                  size_t reason_size);
  /* Computes the problem. Input and output are dense in problem->layout and hold elements of
   * problem->dtype (f16/bf16 as their 16 bits, native byte order); indices (int64, the
   * output's shape and layout) is non-NULL exactly when a max asks for them. Must write every
   * output element and nothing else, and give the same result every time it is called on the
   * same problem and input. Returns 0, or nonzero with a message (NUL-terminated, at most
   * message_size bytes). Neither the buffers' addresses nor their alignment beyond the element
   * size are promised. */
  int (*run)(const poolspec_backend* self, const poolspec_problem* problem, const void* input,
             void* output, int64_t* indices, char* message, size_t message_size);
  void* context; /* the backend's own, untouched by poolspec */
  /* Version 2, optional (NULL: the backend has no shape rule of its own to certify). The output
   * extents the backend's own shape rule gives for the problem's attributes, as a framework's
   * shape inference would: every axes[i].output is -1 (not given). Writes spatial_rank extents
   * into `extents` and returns 1; or returns 0, with a reason, when the backend refuses these
   * attributes (as its framework must refuse some: a window longer than the padded input, a
   * pad the framework does not allow). Writes nothing else. Certify compares the answer with
   * the rule set's, refusals included. */
  int (*output_shape)(const poolspec_backend* self, const poolspec_problem* problem,
                      int64_t* extents, char* reason, size_t reason_size);
};

typedef const poolspec_backend* (*poolspec_backend_entry_fn)(uint32_t index);

#ifdef __cplusplus
}
#endif

#endif /* POOLSPEC_BACKEND_H */
