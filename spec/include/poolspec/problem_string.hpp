// The problem string: the one textual form of a Problem (docs/design.md §2), e.g.
//   avg:f32:n2c16:h7w7:k3x3:s1x1:pb1x1:pe1x1:exclude:floor
// Fields, ':'-separated, in this canonical order:
//   op            avg | max
//   dtype         f64 f32 f16 bf16 i32 i8 u8
//   n<N>c<C>      batch and channels
//   spatial       w<W> (1-D), h<H>w<W> (2-D), d<D>h<H>w<W> (3-D), i<d1>x<d2>x...x<dn> (any rank)
//   k<..>  s<..>  [dl<..>]  pb<..>  pe<..>   kernel, strides, dilations (omitted when all 1), pads;
//                 one value per spatial axis, 'x'-separated
//   divisor       exclude | include_clip | include_full | override=<k>   (avg only)
//   rounding      floor | ceil | ceil_torch
//   options       bias=<b> (avg: T_out = (b + T_sum) / T_div)  empty=<error|zero|nan|lowest|-inf>
//   nan=<propagate|ignore>
//                 round=<half_even|half_away|half_up|toward_zero|floor>
//                 idx=<plane|tensor>  order=<row|col>  idxaxis=<axis>  start=<first|lowest>
//                 (each printed only when not default)
// Defaults when a field is absent on input: s, dl = 1; pb, pe = 0; exclude; floor; empty=error;
// nan=propagate; round=half_even; no indices; order=row; idxaxis=0; start=first. format(parse(s))
// == s for every canonical s, and parse(format(p)) == p for every p whose divisor_override is set
// exactly when its divisor is override (a rule of validate()).
#pragma once

#include <string>
#include <string_view>

#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"

namespace poolspec {

// Syntax only; call validate() for the model's rules.
Result<Problem> parse_problem(std::string_view text);
std::string format_problem(const Problem& p);

}  // namespace poolspec
