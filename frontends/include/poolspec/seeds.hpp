// The seed documents' own examples, with what each document claims. The main job runs the spec
// over them and reports where the documents are wrong (spec/ERRATA.md); the tests check the
// spec's answers against expectations derived by hand, independently of these claims.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "poolspec/problem.hpp"

namespace poolspec::seeds {

enum class Frontend { ngraph, openvino };

struct Example {
  std::string_view id;      // e.g. "ov-avgpool1-xml-1"
  std::string_view source;  // the document and the example's place in it
  Frontend frontend;
  Op op;
  std::string_view attributes;  // verbatim from the document (XML attributes or key=value)
  std::vector<int64_t> input_shape;
  std::vector<double> input;  // empty: shape-only example
  std::vector<int64_t> documented_shape;
  std::vector<double> documented_output;  // empty: shape-only example
  std::vector<int64_t> documented_at;     // flat output indices the claims are about; empty: all
  std::string_view erratum;               // ERRATA.md entry the document's claim falls under, or ""
};

std::span<const Example> examples();

}  // namespace poolspec::seeds
