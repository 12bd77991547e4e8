// .npy reading and writing: every dtype round-trips bit for bit; malformed files are refused.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include <doctest/doctest.h>

#include "poolspec/npy.hpp"

namespace poolspec {
namespace {

TEST_CASE("every dtype round-trips through .npy, specials included") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Row {
    DType dtype;
    std::vector<double> values;
  };
  const Row rows[] = {
      {DType::f64, {1.5, -0.0, nan, inf, std::ldexp(1.0, -1074)}},
      {DType::f32, {1.5, -0.0, nan, -inf, std::ldexp(1.0, -149)}},
      {DType::f16, {1.5, -0.0, nan, 65504, std::ldexp(1.0, -24)}},
      {DType::bf16, {1.5, -0.0, nan, inf, 256}},
      {DType::i32, {-2147483648.0, 2147483647, 0, 1, -1}},
      {DType::i8, {-128, 127, 0, 1, -1}},
      {DType::u8, {0, 255, 1, 2, 3}},
  };
  for (const Row& r : rows) {
    CAPTURE(dtype_name(r.dtype));
    const Tensor t = make_tensor(r.dtype, {1, 5}, r.values).value();
    const std::string bytes = encode_npy(t);
    CHECK(bytes.size() % 64 ==
          (5 * static_cast<size_t>(storage_bytes(r.dtype))) % 64);  // header 64-aligned
    const Tensor back = parse_npy(bytes).value();
    CHECK(back.dtype == r.dtype);
    CHECK(back.shape == t.shape);
    for (size_t i = 0; i < r.values.size(); ++i)
      CHECK(same_value(r.dtype, back.values[i], r.values[i]));
  }
}

std::string header(std::string_view dict) {
  std::string h(dict);
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

TEST_CASE("big-endian and Fortran-order files are read correctly") {
  // '>i4' [1, 2]: bytes 00 00 00 01 00 00 00 02.
  const std::string be = header("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n") +
                         std::string("\x00\x00\x00\x01\x00\x00\x00\x02", 8);
  CHECK(parse_npy(be)->values == std::vector<double>{1, 2});
  // A 2x3 array [[1,2,3],[4,5,6]] stored column-major: 1 4 2 5 3 6.
  const std::string fortran =
      header("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 3), }\n") +
      std::string("\x01\x04\x02\x05\x03\x06", 6);
  CHECK(parse_npy(fortran)->values == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("malformed .npy files are refused with a reason") {
  const std::string good =
      header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n") + std::string(8, '\0');
  REQUIRE(parse_npy(good).ok());
  const auto reason = [](const std::string& bytes) {
    Result<Tensor> t = parse_npy(bytes);
    return t ? std::string() : t.error().message;
  };
  CHECK(reason("PK\x03\x04").find("magic") != std::string::npos);
  CHECK(reason(good.substr(0, 9)).find("magic") != std::string::npos);           // truncated
  CHECK(reason(good.substr(0, 30)).find("header length") != std::string::npos);  // truncated header
  CHECK(reason(good.substr(0, good.size() - 1)).find("promises 8 bytes") != std::string::npos);
  CHECK(reason(good + "x").find("promises 8 bytes") != std::string::npos);  // trailing data
  // A lying header: 1000 elements promised, 2 present.
  CHECK(reason(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }\n") +
               std::string(8, '\0'))
            .find("promises 4000 bytes") != std::string::npos);
  // Element counts that overflow.
  CHECK(
      reason(
          header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n"))
          .find("2^62") != std::string::npos);
  CHECK(
      reason(header("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n")).find("descr") !=
      std::string::npos);
  CHECK(reason(header("{'descr': '<f4', 'shape': (2,), }\n")).find("required") !=
        std::string::npos);
  CHECK(reason(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n"))
            .find("unknown key") != std::string::npos);
  // An f16 value of a signalling pattern still decodes; an i8 file of the wrong length does not.
  CHECK(!parse_npy(header("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }\n") + "ab")
             .ok());
}

TEST_CASE("writing is atomic: a failed write leaves no file") {
  const Tensor t = make_tensor(DType::f32, {2}, {1, 2}).value();
  CHECK(!write_file_atomically("/nonexistent-folder/out.npy", encode_npy(t)).ok());
  const std::string path = "poolspec_test_atomic.npy";
  REQUIRE(write_file_atomically(path, encode_npy(t)).ok());
  CHECK(read_npy(path)->values == std::vector<double>{1, 2});
  CHECK(!std::ifstream(path + ".poolspec-partial").good());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace poolspec
