#include "poolspec/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/problem.hpp"

namespace poolspec {

namespace {

constexpr std::string_view magic = "\x93NUMPY";

Error npy_error(std::string_view what) { return Error{fmt::format(".npy: {}", what)}; }

// A tiny reader for the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : s_(text) {}

  Status read(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip();
    if (!eat('{')) return npy_error("header: expected '{'");
    while (true) {
      skip();
      if (eat('}')) break;
      std::string key;
      if (!string(key)) return npy_error("header: expected a quoted key");
      skip();
      if (!eat(':')) return npy_error(fmt::format("header: expected ':' after '{}'", key));
      skip();
      if (key == "descr") {
        if (have_descr || !string(descr)) return npy_error("header: bad or repeated 'descr'");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) return npy_error("header: repeated 'fortran_order'");
        if (word("True"))
          fortran = true;
        else if (word("False"))
          fortran = false;
        else
          return npy_error("header: 'fortran_order' must be True or False");
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape || !tuple(shape)) return npy_error("header: bad or repeated 'shape'");
        have_shape = true;
      } else {
        return npy_error(fmt::format("header: unknown key '{}'", key));
      }
      skip();
      if (eat(',')) continue;
      skip();
      if (eat('}')) break;
      return npy_error("header: expected ',' or '}'");
    }
    skip();
    if (pos_ != s_.size()) return npy_error("header: text after the dict");
    if (!have_descr || !have_fortran || !have_shape)
      return npy_error("header: 'descr', 'fortran_order' and 'shape' are all required");
    return Ok{};
  }

 private:
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  bool string(std::string& out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    const char quote = s_[pos_++];
    const size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) return false;
    out = std::string(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return true;
  }
  bool tuple(std::vector<int64_t>& out) {
    if (!eat('(')) return false;
    while (true) {
      skip();
      if (eat(')')) return true;
      int64_t v = 0;
      size_t digits = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (INT64_MAX - 9) / 10) return false;  // too large for any valid shape
        v = v * 10 + (s_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) return false;
      if (digits > 1 && s_[pos_ - digits] == '0') return false;  // "01" is no Python integer
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;           // Python 2 long suffix
      out.push_back(v);
      skip();
      if (eat(')')) return true;
      if (!eat(',')) return false;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

struct Format {
  DType dtype;
  bool big_endian;
};

std::optional<Format> format_of(std::string_view descr) {
  if (descr.size() != 3) return std::nullopt;
  const char order = descr[0];
  const std::string_view kind = descr.substr(1);
  bool big = false;
  if (order == '>')
    big = true;
  else if (order != '<' && order != '|' && order != '=')
    return std::nullopt;
  struct Entry {
    std::string_view kind;
    DType dtype;
  };
  static constexpr Entry entries[] = {{"f8", DType::f64},  {"f4", DType::f32}, {"f2", DType::f16},
                                      {"u2", DType::bf16}, {"i4", DType::i32}, {"i1", DType::i8},
                                      {"u1", DType::u8}};
  for (const Entry& e : entries)
    if (e.kind == kind) {
      if (order == '|' && storage_bytes(e.dtype) != 1) return std::nullopt;
      return Format{e.dtype, big};
    }
  return std::nullopt;
}

uint64_t load(const unsigned char* p, int bytes, bool big_endian) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    const int shift = big_endian ? (bytes - 1 - i) * 8 : i * 8;
    v |= static_cast<uint64_t>(p[i]) << shift;
  }
  return v;
}

double decode(DType dtype, uint64_t raw) {
  switch (dtype) {
    case DType::f64: return std::bit_cast<double>(raw);
    case DType::f32: return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(raw)));
    case DType::f16: return f16_value(static_cast<uint16_t>(raw));
    case DType::bf16: return bf16_value(static_cast<uint16_t>(raw));
    case DType::i32: return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(raw)));
    case DType::i8: return static_cast<double>(static_cast<int8_t>(static_cast<uint8_t>(raw)));
    case DType::u8: return static_cast<double>(static_cast<uint8_t>(raw));
  }
  return 0;
}

uint64_t encode(DType dtype, double v) {
  switch (dtype) {
    case DType::f64: return std::bit_cast<uint64_t>(v);
    case DType::f32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    case DType::f16: return f16_bits(v);
    case DType::bf16: return bf16_bits(v);
    case DType::i32: return static_cast<uint32_t>(static_cast<int32_t>(v));
    case DType::i8: return static_cast<uint8_t>(static_cast<int8_t>(v));
    case DType::u8: return static_cast<uint8_t>(v);
  }
  return 0;
}

std::string descr_of(DType dtype) {
  switch (dtype) {
    case DType::f64: return "<f8";
    case DType::f32: return "<f4";
    case DType::f16: return "<f2";
    case DType::bf16: return "<u2";
    case DType::i32: return "<i4";
    case DType::i8: return "|i1";
    case DType::u8: return "|u1";
  }
  return "";
}

std::string encode_raw(std::string_view descr, const std::vector<int64_t>& shape, int itemsize,
                       size_t count, auto&& raw_of) {
  // Python tuple syntax: "(1, 3, 32)", but "(5,)" for one axis.
  std::string dims = fmt::format("{}", fmt::join(shape, ", "));
  if (shape.size() == 1) dims += ",";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // Version 1.0: magic, 2 version bytes, 2 length bytes; pad with spaces so the data starts at
  // a multiple of 64 bytes, and end the header with '\n'.
  const size_t unpadded = magic.size() + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(magic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.reserve(out.size() + count * static_cast<size_t>(itemsize));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t raw = raw_of(i);
    for (int b = 0; b < itemsize; ++b) out += static_cast<char>((raw >> (8 * b)) & 0xff);
  }
  return out;
}

}  // namespace

namespace {

// What the header says: the format, the shape, and where the data starts and how long it is.
struct Header {
  Format format;
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  int64_t count = 0;
  size_t data_start = 0;
  uint64_t data_bytes = 0;
};

// NumPy's headers are a few hundred bytes (version 1.0 caps them at 65,535); a longer one is not
// read.
constexpr uint64_t longest_header = uint64_t{1} << 20;

// The prelude (magic, version, header length) from the file's first bytes: where the header text
// starts and how long it is. `first` may hold more than the prelude.
Result<std::pair<size_t, uint64_t>> read_prelude(std::string_view first) {
  if (first.size() < 10 || first.substr(0, magic.size()) != magic)
    return npy_error("not a .npy file (missing the \\x93NUMPY magic)");
  const auto* u = reinterpret_cast<const unsigned char*>(first.data());
  const int major = u[6], minor = u[7];
  if (major < 1 || major > 3 || minor != 0)
    return npy_error(
        fmt::format("format version {}.{}: only 1.0, 2.0 and 3.0 exist", major, minor));
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (first.size() < 8 + length_bytes) return npy_error("truncated before the header length");
  const uint64_t header_length = load(u + 8, static_cast<int>(length_bytes), false);
  if (header_length > longest_header)
    return npy_error(fmt::format("header length {}: poolspec reads headers of at most {} bytes",
                                 header_length, longest_header));
  return std::pair{8 + length_bytes, header_length};
}

Result<Header> parse_header(std::string_view text, size_t data_start) {
  Header h;
  if (Status s = HeaderReader(text).read(h.descr, h.fortran, h.shape); !s) return s.error();
  const std::optional<Format> format = format_of(h.descr);
  if (!format)
    return npy_error(
        fmt::format("descr '{}': poolspec reads f8 f4 f2 u2(bfloat16) i4 i1 u1", h.descr));
  h.format = *format;
  Result<int64_t> count = element_count(h.shape);
  if (!count) return npy_error(count.error().message);
  h.count = *count;
  const auto itemsize = static_cast<uint64_t>(storage_bytes(h.format.dtype));
  h.data_bytes = static_cast<uint64_t>(h.count) * itemsize;
  if (h.count > 0 && h.data_bytes / static_cast<uint64_t>(h.count) != itemsize)
    return npy_error("the data size overflows");
  h.data_start = data_start;
  return h;
}

Error size_error(const Header& h, uint64_t held) {
  return npy_error(
      fmt::format("the header promises {} bytes of data ({} elements of {}), the file holds {}",
                  h.data_bytes, h.count, h.descr, held));
}

Result<Tensor> decode_data(Header h, std::string_view data) {
  if (data.size() != h.data_bytes) return size_error(h, data.size());
  const int itemsize = storage_bytes(h.format.dtype);
  std::vector<double> values(static_cast<size_t>(h.count));
  const auto* d = reinterpret_cast<const unsigned char*>(data.data());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = decode(h.format.dtype,
                       load(d + i * static_cast<size_t>(itemsize), itemsize, h.format.big_endian));
  if (h.fortran && h.shape.size() > 1) {
    // Column-major file order: element (x0..xr) is at x0 + d0*(x1 + d1*(...)). Reorder.
    std::vector<double> row_major(values.size());
    std::vector<int64_t> x(h.shape.size(), 0);
    for (size_t flat = 0; flat < values.size(); ++flat) {
      size_t column_index = 0;
      for (size_t a = h.shape.size(); a > 0; --a)
        column_index =
            column_index * static_cast<size_t>(h.shape[a - 1]) + static_cast<size_t>(x[a - 1]);
      row_major[flat] = values[column_index];
      for (size_t a = h.shape.size(); a > 0; --a) {
        if (++x[a - 1] < h.shape[a - 1]) break;
        x[a - 1] = 0;
      }
    }
    values = std::move(row_major);
  }
  return make_tensor(h.format.dtype, std::move(h.shape), std::move(values));
}

// Up to `n` bytes from `fd` (fewer at the end of the file); -1 on a read error.
int64_t read_up_to(int fd, char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, out + got, n - got);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    got += static_cast<size_t>(r);
  }
  return static_cast<int64_t>(got);
}

}  // namespace

Result<Tensor> parse_npy(std::string_view bytes) {
  Result<std::pair<size_t, uint64_t>> prelude = read_prelude(bytes);
  if (!prelude) return prelude.error();
  const auto [data_start, header_length] = *prelude;
  if (header_length > bytes.size() - data_start)
    return npy_error(fmt::format("header length {} runs past the end of the file ({} bytes)",
                                 header_length, bytes.size()));
  Result<Header> h =
      parse_header(bytes.substr(data_start, header_length), data_start + header_length);
  if (!h) return h.error();
  return decode_data(std::move(*h), bytes.substr(data_start + header_length));
}

Result<Tensor> read_npy(const std::string& path, const NpyLimits& limits) {
  const bool standard_input = path == "-";
  const std::string name = standard_input ? "standard input" : path;
  // Opened without waiting for a writer (a FIFO nobody writes to is then an empty file), then
  // read blocking.
  const int fd = standard_input ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Error{fmt::format("{}: cannot open for reading ({})", name, std::strerror(errno))};
  if (!standard_input) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  struct Closer {
    int fd;
    bool owned;
    ~Closer() {
      if (owned) ::close(fd);
    }
  } closer{fd, !standard_input};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return Error{fmt::format("{}: cannot be examined", name)};
  if (S_ISDIR(info.st_mode)) return Error{fmt::format("{}: a folder, not a .npy file", name)};
  const auto fail = [&](const Error& e) { return Error{fmt::format("{}: {}", name, e.message)}; };

  // The prelude and the header first: nothing more is read until they are checked.
  std::string head(12, '\0');
  const int64_t first = read_up_to(fd, head.data(), head.size());
  if (first < 0) return Error{fmt::format("{}: read error ({})", name, std::strerror(errno))};
  head.resize(static_cast<size_t>(first));
  Result<std::pair<size_t, uint64_t>> prelude = read_prelude(head);
  if (!prelude) return fail(prelude.error());
  const auto [data_start, header_length] = *prelude;
  const size_t header_end = data_start + static_cast<size_t>(header_length);
  if (head.size() < header_end) {
    const size_t had = head.size();
    head.resize(header_end);
    const int64_t more = read_up_to(fd, head.data() + had, header_end - had);
    if (more < 0) return Error{fmt::format("{}: read error ({})", name, std::strerror(errno))};
    if (static_cast<size_t>(more) < header_end - had)
      return fail(npy_error(fmt::format("header length {} runs past the end of the file ({} bytes)",
                                        header_length, had + static_cast<size_t>(more))));
  }
  Result<Header> h =
      parse_header(std::string_view(head).substr(data_start, header_length), header_end);
  if (!h) return fail(h.error());
  if (h->count > limits.max_elements)
    return Error{fmt::format("{}: {} elements, over the limit of {}{}", name, h->count,
                             limits.max_elements,
                             limits.how_to_raise.empty() ? "" : " (" + limits.how_to_raise + ")")};
  const std::string_view already = std::string_view(head).substr(std::min(head.size(), header_end));
  const auto file_size = static_cast<uint64_t>(std::max<off_t>(0, info.st_size));
  if (S_ISREG(info.st_mode) && file_size != header_end + h->data_bytes)
    return fail(size_error(*h, file_size > header_end ? file_size - header_end : 0));

  // Then exactly the data the header promises, and a check that nothing follows it. The buffer
  // grows as data arrives (a pipe's header may promise more than ever comes).
  std::string data(already);
  constexpr uint64_t chunk = uint64_t{1} << 24;
  while (data.size() < h->data_bytes) {
    const size_t had = data.size();
    const auto want = static_cast<size_t>(std::min<uint64_t>(chunk, h->data_bytes - had));
    data.resize(had + want);
    const int64_t got = read_up_to(fd, data.data() + had, want);
    if (got < 0) return Error{fmt::format("{}: read error ({})", name, std::strerror(errno))};
    data.resize(had + static_cast<size_t>(got));
    if (static_cast<size_t>(got) < want) break;  // the end of the file
  }
  if (data.size() < h->data_bytes) return fail(size_error(*h, data.size()));
  char extra = 0;
  if (read_up_to(fd, &extra, 1) > 0)
    return fail(npy_error(
        fmt::format("more data follows the {} bytes the header promises", h->data_bytes)));
  return decode_data(std::move(*h), data);
}

std::string encode_npy(const Tensor& t) {
  return encode_raw(descr_of(t.dtype), t.shape, storage_bytes(t.dtype), t.values.size(),
                    [&](size_t i) { return encode(t.dtype, t.values[i]); });
}

std::string encode_npy_indices(const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& indices) {
  return encode_raw("<i8", shape, 8, indices.size(),
                    [&](size_t i) { return static_cast<uint64_t>(indices[i]); });
}

}  // namespace poolspec
