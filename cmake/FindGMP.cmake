# FindGMP: GMP and its C++ interface (libgmp-dev), which ship no CMake package.
# Defines the imported targets GMP::gmp and GMP::gmpxx (which links GMP::gmp).
find_path(GMP_INCLUDE_DIR gmpxx.h)
find_library(GMP_LIBRARY gmp)
find_library(GMPXX_LIBRARY gmpxx)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GMP REQUIRED_VARS GMP_LIBRARY GMPXX_LIBRARY GMP_INCLUDE_DIR)
if(GMP_FOUND AND NOT TARGET GMP::gmp)
  add_library(GMP::gmp UNKNOWN IMPORTED)
  set_target_properties(GMP::gmp PROPERTIES IMPORTED_LOCATION "${GMP_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${GMP_INCLUDE_DIR}")
  add_library(GMP::gmpxx UNKNOWN IMPORTED)
  set_target_properties(GMP::gmpxx PROPERTIES IMPORTED_LOCATION "${GMPXX_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${GMP_INCLUDE_DIR}" INTERFACE_LINK_LIBRARIES GMP::gmp)
endif()
mark_as_advanced(GMP_INCLUDE_DIR GMP_LIBRARY GMPXX_LIBRARY)
