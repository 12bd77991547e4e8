// .npy reading and writing: every dtype round-trips bit for bit; malformed files are refused.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <doctest/doctest.h>

#include "poolspec/files.hpp"
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
  CHECK(reason(header("{'descr': '<f4', 'fortran_order': False, 'shape': (02,), }\n"))
            .find("shape") != std::string::npos);  // NumPy writes no leading zeros
  // An f16 value of a signalling pattern still decodes; an i8 file of the wrong length does not.
  CHECK(!parse_npy(header("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }\n") + "ab")
             .ok());
}

std::string file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Whether `folder` holds a temporary left by write_files_atomically.
bool temporaries_left(const std::string& folder) {
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().filename().string().find(".poolspec-partial") != std::string::npos)
      return true;
  return false;
}

TEST_CASE("writing is atomic: a failed write leaves no file, and an existing one as it was") {
  const Tensor t = make_tensor(DType::f32, {2}, {1, 2}).value();
  const std::string folder = "poolspec_test_files";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directory(folder);
  const std::string out = folder + "/out.npy", indices = folder + "/indices.npy";
  CHECK(!write_file_atomically("/nonexistent-folder/out.npy", encode_npy(t)).ok());
  REQUIRE(write_file_atomically(out, encode_npy(t)).ok());
  CHECK(read_npy(out)->values == std::vector<double>{1, 2});
  // A set whose second file cannot be written: the first keeps its old bytes, nothing is left.
  const Tensor u = make_tensor(DType::f32, {2}, {3, 4}).value();
  const std::string u_bytes = encode_npy(u);
  CHECK(!write_files_atomically({{out, u_bytes}, {folder + "/missing/indices.npy", u_bytes}}).ok());
  CHECK(read_npy(out)->values == std::vector<double>{1, 2});
  CHECK(!temporaries_left(folder));
  // Refused before anything is written: one file twice (under two spellings), a folder, "".
  const Status twice = write_files_atomically({{out, u_bytes}, {folder + "/./out.npy", u_bytes}});
  REQUIRE(!twice.ok());
  CHECK(twice.error().message.find("the same file") != std::string::npos);
  CHECK(!write_files_atomically({{folder, u_bytes}}).ok());
  CHECK(!write_files_atomically({{"", u_bytes}}).ok());
  CHECK(!write_files_atomically({{"-", u_bytes}, {"-", u_bytes}}).ok());
  // A name the file system cannot hold, after a file that exists: refused before the first is
  // replaced (a rename would fail only after it).
  const Status long_name =
      write_files_atomically({{out, u_bytes}, {folder + "/" + std::string(300, 'n'), u_bytes}});
  REQUIRE(!long_name.ok());
  CHECK(long_name.error().message.find("a file name of 300 bytes") != std::string::npos);
  CHECK(read_npy(out)->values == std::vector<double>{1, 2});
  // A whole set: both written (the existing one kept by a second name until both are in place,
  // which is then removed: no temporary is left).
  REQUIRE(write_files_atomically({{out, u_bytes}, {indices, u_bytes}}).ok());
  CHECK(read_npy(out)->values == std::vector<double>{3, 4});
  CHECK(file_text(indices) == u_bytes);
  CHECK(!temporaries_left(folder));
  std::filesystem::remove_all(folder);
}

TEST_CASE("a stop by SIGTERM during a write removes the temporary and leaves no file") {
  const std::string folder = "poolspec_test_stop";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directory(folder);
  // 4 GiB of zero pages (never touched, so never allocated): writing them takes seconds, and the
  // stop arrives while the temporary is being written.
  const size_t size = size_t{4} << 30;
  void* zeros =
      ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(zeros != MAP_FAILED);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::signal(SIGTERM, SIG_DFL);  // as in a program that does not handle it (doctest does)
    (void)write_file_atomically(folder + "/big.bin", {static_cast<const char*>(zeros), size});
    ::_exit(0);
  }
  bool started = false;  // the temporary exists: the write is under way
  for (int i = 0; i < 2000 && !started; ++i) {
    started = temporaries_left(folder);
    if (!started) ::usleep(1000);
  }
  ::kill(child, SIGTERM);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::munmap(zeros, size);
  CHECK(started);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);  // the signal's own effect, after the cleanup
  CHECK(!temporaries_left(folder));
  CHECK(!std::filesystem::exists(folder + "/big.bin"));
  std::filesystem::remove_all(folder);
}

TEST_CASE("a file is read header first: folders, endless and oversized inputs are refused") {
  const auto refusal = [](const std::string& path, const NpyLimits& limits = {}) {
    const Result<Tensor> r = read_npy(path, limits);
    return r ? std::string() : r.error().message;
  };
  CHECK(refusal(".").find("a folder") != std::string::npos);
  CHECK(refusal("/dev/zero").find("not a .npy file") != std::string::npos);
  CHECK(refusal("/nonexistent/x.npy").find("cannot open") != std::string::npos);
  const Tensor t = make_tensor(DType::f32, {4}, {1, 2, 3, 4}).value();
  const std::string path = "poolspec_test_read.npy";
  std::ofstream(path, std::ios::binary) << encode_npy(t);
  CHECK(refusal(path).empty());
  const std::string limited = refusal(path, NpyLimits{3, "--max-elements raises it"});
  CHECK(limited.find("4 elements, over the limit of 3 (--max-elements raises it)") !=
        std::string::npos);
  std::ofstream(path, std::ios::binary | std::ios::app) << "x";  // one byte past the data
  CHECK(refusal(path).find("the file holds 17") != std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace poolspec
