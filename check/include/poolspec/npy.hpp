// NumPy .npy files (format versions 1.0, 2.0 and 3.0), the tensor format of the command line.
// dtypes: '<f8' f64, '<f4' f32, '<f2' f16, '<i4' i32, '|i1' i8, '|u1' u8, either byte order.
// bfloat16: NumPy has no bfloat16 dtype, so a bf16 tensor is stored as '<u2', the raw bfloat16 bit
// patterns (what `arr.view(np.uint16)` of an ml_dtypes.bfloat16 array gives); '<u2' is read as
// bf16. fortran_order=True files are read and reordered into row-major order.
// Every header field is checked, and the data must be exactly as long as the header says.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec {

Result<Tensor> parse_npy(std::string_view bytes);
Result<Tensor> read_npy(const std::string& path);

std::string encode_npy(const Tensor& t);
std::string encode_npy_indices(const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& indices);  // '<i8'

// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a
// partial file is never left at `path`.
Status write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace poolspec
