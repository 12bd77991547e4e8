#!/usr/bin/env bash
# Installs every Debian 12 package poolspec needs to build and test. Idempotent: when all are
# present it only runs dpkg-query and exits (well under a second).
# Package names and pitfalls: see docs/building.md (libclang-rt-14-dev is only a Recommends of
# clang, so it is named explicitly; without it clang's -fsanitize=... cannot link).
set -euo pipefail

packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev   # both compilers; clang's sanitizer and libFuzzer runtimes
  llvm-14                                          # llvm-profdata-14, llvm-cov-14: fuzz/coverage.sh
  clang-format-14                                  # the source layout (.clang-format, scripts/format.sh)
  yamllint                                         # the GitHub workflows' lint (.yamllint)
  libfmt-dev                                       # fmt 9: formatting
  doctest-dev librapidcheck-dev                    # unit and property tests
  libgmp-dev                                       # exact sums in the spec (gmpxx)
  libcli11-dev                                     # the poolspec command line
  nlohmann-json3-dev                               # --json output
  libz3-dev z3                                     # the proofs (z3++ API) and the SMT-LIB rechecks
  libonnx-dev libprotobuf-dev protobuf-compiler    # onnx-test and check-model read ONNX models and tensors
  libpugixml-dev                                   # check-model reads OpenVINO IR (XML)
  libseccomp-dev pkgconf                           # certify's worker confines a backend's signals
  libonnx-testdata                                 # the ONNX backend node tests (conformance)
  libhwy-dev                                       # Highway: the optimized engine's SIMD kernels
  libomp-14-dev                                    # OpenMP for clang (g++ brings libgomp)
  libdnnl-dev ocl-icd-opencl-dev                   # oneDNN 2.6, a benchmark peer (its CMake config needs OpenCL)
  libxnnpack-dev libpthreadpool-dev                # XNNPACK, a benchmark peer (its header needs pthreadpool.h)
  libopencv-dnn-dev                                # OpenCV DNN 4.6, a certified backend
  libarmnn-dev libarmnn-cpuref-backend22           # Arm NN 20.08 and its CpuRef backend, certified
  mlir-15-tools libmlir-15-dev llvm-15             # MLIR 15's TOSA lowering (mlir-opt, llc), certified
  pybind11-dev python3-dev python3-numpy           # the Python module (python/)
  python3-pytest python3-torch                     # its tests: pytest, and PyTorch to compare with
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
