// NumPy .npy files (format versions 1.0, 2.0 and 3.0), the tensor format of the command line.
// dtypes: '<f8' f64, '<f4' f32, '<f2' f16, '<i4' i32, '|i1' i8, '|u1' u8, either byte order.
// bfloat16: NumPy has no bfloat16 dtype, so a bf16 tensor is stored as '<u2', the raw bfloat16 bit
// patterns (what `arr.view(np.uint16)` of an ml_dtypes.bfloat16 array gives); '<u2' is read as
// bf16. fortran_order=True files are read and reordered into row-major order.
// Every header field is checked, and the data must be exactly as long as the header says. A file
// is read header first: nothing more is read from one whose header is wrong, too large, or
// promises another size than the file has.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec {

// How large a tensor read_npy reads: its elements become doubles (8 bytes each), so a limit
// keeps a file's header from claiming more memory than the machine has.
struct NpyLimits {
  int64_t max_elements = int64_t{1} << 28;
  std::string how_to_raise;  // said with the refusal (the command's option for it)
};

Result<Tensor> parse_npy(std::string_view bytes);
// "-" reads standard input. A folder, a file the header does not describe exactly, or a tensor
// of more than limits.max_elements elements is refused.
Result<Tensor> read_npy(const std::string& path, const NpyLimits& limits = {});

std::string encode_npy(const Tensor& t);
std::string encode_npy_indices(const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& indices);  // '<i8'

}  // namespace poolspec
