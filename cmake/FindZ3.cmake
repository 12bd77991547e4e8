# FindZ3: the Z3 solver's C++ API (libz3-dev). Debian's Z3 ships no CMake package; where Z3's own
# Z3Config.cmake exists it is used, else the header and library are found here. Either way the
# imported target is z3::libz3, the name Z3's own package gives it.
find_package(Z3 CONFIG QUIET NO_MODULE)
if(TARGET z3::libz3)
  set(Z3_FOUND TRUE)
  return()
endif()
find_path(Z3_INCLUDE_DIR z3++.h)
find_library(Z3_LIBRARY z3)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Z3 REQUIRED_VARS Z3_LIBRARY Z3_INCLUDE_DIR)
if(Z3_FOUND)
  add_library(z3::libz3 UNKNOWN IMPORTED)
  set_target_properties(z3::libz3 PROPERTIES IMPORTED_LOCATION "${Z3_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${Z3_INCLUDE_DIR}")
endif()
mark_as_advanced(Z3_INCLUDE_DIR Z3_LIBRARY)
