// fuzz_npy: the .npy reader (check/src/npy.cpp).
//
// Targets: parse_npy on arbitrary bytes: the magic, the format version, the header length, the
// header dictionary (descr, fortran_order, shape), the byte order and the data length.
// Input: the bytes as a file (a dictionary of header tokens helps: fuzz_npy.dict).
// Oracle:
//   - a malformed file is refused with an error, never a crash, leak or UB (ASan, UBSan);
//   - what parses re-encodes (encode_npy) to a file that parses to the same tensor, bit for bit,
//     and whose encoding is a fixed point.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "poolspec/npy.hpp"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "\n== fuzz_npy: FAILURE\n%s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

bool same_bits(const poolspec::Tensor& a, const poolspec::Tensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i)
    if (!poolspec::same_value(a.dtype, a.values[i], b.values[i])) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  poolspec::Result<poolspec::Tensor> t = poolspec::parse_npy(bytes);
  if (!t) return 0;
  const std::string encoded = poolspec::encode_npy(*t);
  poolspec::Result<poolspec::Tensor> again = poolspec::parse_npy(encoded);
  if (!again) fail("the re-encoded file does not parse: " + again.error().message);
  if (!same_bits(*t, *again)) fail("the re-encoded file holds a different tensor");
  if (poolspec::encode_npy(*again) != encoded) fail("encode_npy is not a fixed point");
  return 0;
}
