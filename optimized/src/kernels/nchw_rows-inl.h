// NCHW output rows: their window rows, the factor tables of their divisors, and their empty
// outputs. Included by each kernel file once per SIMD target (Highway's foreach_target); the guard
// toggles with HWY_TARGET_TOGGLE, so each target gets its own copy in its own namespace.
#include "kernels/simd-inl.h"

#if defined(POOLSPEC_OPTIMIZED_KERNELS_NCHW_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLSPEC_OPTIMIZED_KERNELS_NCHW_ROWS_INL_H_
#undef POOLSPEC_OPTIMIZED_KERNELS_NCHW_ROWS_INL_H_
#else
#define POOLSPEC_OPTIMIZED_KERNELS_NCHW_ROWS_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {
// An NCHW output row: its plane (n * C + c), depth and height indices, stepped without dividing.
struct OutputRow {
  int64_t plane = 0, od = 0, oh = 0;
  OutputRow(const Plan& P, int64_t row)
      : plane(row / (P.axis[0].out * P.axis[1].out)),
        od((row / P.axis[1].out) % P.axis[0].out),
        oh(row % P.axis[1].out) {}
  void Next(const Plan& P) {
    if (++oh < P.axis[1].out) return;
    oh = 0;
    if (++od < P.axis[0].out) return;
    od = 0;
    ++plane;
  }
};

// The input rows of an output row of an NCHW problem, in scan order; returns their number.
template <class S>
HWY_INLINE size_t WindowRows(const Plan& P, const S* in, const OutputRow& at, const S** sources) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1];
  const int64_t od = at.od, oh = at.oh;
  const S* plane = in + at.plane * P.in_plane;
  size_t count = 0;
  for (int64_t td = AD.first[static_cast<size_t>(od)]; td < AD.past[static_cast<size_t>(od)];
       ++td) {
    const int64_t id = AD.start(od) + td * AD.dilation;
    for (int64_t th = AH.first[static_cast<size_t>(oh)]; th < AH.past[static_cast<size_t>(oh)];
         ++th) {
      const int64_t ih = AH.start(oh) + th * AH.dilation;
      sources[count++] = plane + (id * AH.in + ih) * P.axis[2].in;
    }
  }
  return count;
}

// The input rows of an output row, from the input itself: its window's depth slices and rows.
template <class S>
struct InputWindowRows {
  const Plan* plan;
  const S* in;
  size_t operator()(const OutputRow& at, const S** sources) const {
    return WindowRows(*plan, in, at, sources);
  }
};

// The rows of an output row's window along H in the plane of its depth window's sums (SumSlices),
// `row_stride` apart; none when the depth window is empty.
template <class Acc>
struct SliceSumRows {
  const AxisTable* depth;
  const AxisTable* height;
  const Acc* sums;
  int64_t row_stride;
  size_t operator()(const OutputRow& at, const Acc** sources) const {
    if (depth->count(at.od) == 0) return 0;
    const AxisTable& AH = *height;
    size_t count = 0;
    for (int64_t th = AH.first[static_cast<size_t>(at.oh)];
         th < AH.past[static_cast<size_t>(at.oh)]; ++th)
      sources[count++] = sums + (AH.start(at.oh) + th * AH.dilation) * row_stride;
    return count;
  }
};

// The factor tables of NCHW output rows' divisors (UseRowFactors): per output column its factor,
// and the columns written as empty. The tables of the last `kept_tables` row factor keys are kept:
// the border rows of each plane change the key row by row (7x7: seven tables per plane), and
// building them again took 7% of the 7x7 layer.
struct RowFactorTable {
  static constexpr int kept_tables = 8;
  struct Kept {
    float* factors = nullptr;
    int64_t* empty_columns = nullptr;
    int64_t empty_count = 0, key = -1;
  };
  std::array<Kept, kept_tables> kept{};
  const Kept* current = nullptr;  // the current row's table, one of the kept ones
  int next_kept = 0;              // the slot a new key takes (round robin)

  int64_t factors_for() const { return current ? current->key : -1; }  // the current table's key
  const float* factors() const { return current->factors; }
  const int64_t* empty_columns() const { return current->empty_columns; }
  int64_t empty_count() const { return current->empty_count; }

  // Tables for rows of out_w outputs, from per-thread vectors; each table's factors start on a
  // cache line and end with `lanes` of 1 (lanes past the row: finite, never stored).
  void Allocate(std::vector<float>& factors_tl, std::vector<int64_t>& empty_tl, int64_t out_w,
                int64_t lanes) {
    const int64_t stride = (out_w + lanes + 15) / 16 * 16;
    float* all_factors = LineScratch(factors_tl, static_cast<size_t>(kept_tables * stride));
    int64_t* all_empty = Scratch(empty_tl, static_cast<size_t>(kept_tables * out_w));
    for (int t = 0; t < kept_tables; ++t) {
      kept[t] = Kept{all_factors + t * stride, all_empty + t * out_w, 0, -1};
      std::fill(kept[t].factors + out_w, kept[t].factors + out_w + lanes, 1.0f);
    }
    current = nullptr;
    next_kept = 0;
  }
};

// Makes scratch.current the table of output row (od, oh), when it is not.
template <class Acc>
void UseRowFactors(const Plan& P, int64_t od, int64_t oh, RowFactorTable& scratch) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t key = RowFactorsKey(P, od, oh);
  if (key == scratch.factors_for()) return;
  RowFactorTable::Kept* table = nullptr;
  for (RowFactorTable::Kept& k : scratch.kept)
    if (k.key == key) table = &k;
  if (!table) {
    table = &scratch.kept[static_cast<size_t>(scratch.next_kept)];
    scratch.next_kept = (scratch.next_kept + 1) % RowFactorTable::kept_tables;
    RowFactors<Acc>(P, od, oh, 0, AW.out, table->factors);
    // Divisor 0: the override's, or a factor of the product's (plan.cpp).
    const bool by_product = P.p.divisor != Divisor::override_value;
    const bool row_zero = by_product ? AD.divisor[static_cast<size_t>(od)] == 0 ||
                                           AH.divisor[static_cast<size_t>(oh)] == 0
                                     : P.p.divisor_override == 0;
    table->empty_count = 0;
    for (int64_t ow = 0; ow < AW.out; ++ow)
      if (row_zero || AW.count(ow) == 0 || (by_product && AW.divisor[static_cast<size_t>(ow)] == 0))
        table->empty_columns[table->empty_count++] = ow;
    table->key = key;
  }
  scratch.current = table;
}

// NCHW output row `row` (at) whose window has no input row: every output written as empty.
inline void WriteEmptyRow(const Plan& P, const RunArgs& a, const OutputRow& at, int64_t row) {
  const int64_t OW = P.axis[2].out;
  for (int64_t ow = 0; ow < OW; ++ow)
    WriteEmpty(P, a, at.plane / P.channels, at.plane % P.channels, row * OW + ow,
               P.divisor(at.od, at.oh, ow) == 0);
}

// The outputs of NCHW output row `row` (at) that its factor table lists as empty.
inline void WriteEmptyColumns(const Plan& P, const RunArgs& a, const OutputRow& at, int64_t row,
                              const RowFactorTable& table) {
  const int64_t OW = P.axis[2].out;
  for (int64_t e = 0; e < table.empty_count(); ++e) {
    const int64_t ow = table.empty_columns()[e];
    WriteEmpty(P, a, at.plane / P.channels, at.plane % P.channels, row * OW + ow,
               P.divisor(at.od, at.oh, ow) == 0);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#endif  // POOLSPEC_OPTIMIZED_KERNELS_NCHW_ROWS_INL_H_
