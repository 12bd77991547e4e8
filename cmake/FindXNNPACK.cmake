# FindXNNPACK: XNNPACK and the pthreadpool its header includes (libxnnpack-dev,
# libpthreadpool-dev), which ship no CMake package. Defines the imported target XNNPACK::XNNPACK.
find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
find_library(XNNPACK_LIBRARY XNNPACK)
find_library(PTHREADPOOL_LIBRARY NAMES pthreadpool libpthreadpool.so.0)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XNNPACK REQUIRED_VARS XNNPACK_LIBRARY PTHREADPOOL_LIBRARY XNNPACK_INCLUDE_DIR)
if(XNNPACK_FOUND AND NOT TARGET XNNPACK::XNNPACK)
  add_library(XNNPACK::XNNPACK UNKNOWN IMPORTED)
  set_target_properties(XNNPACK::XNNPACK PROPERTIES IMPORTED_LOCATION "${XNNPACK_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${XNNPACK_INCLUDE_DIR}"
                        INTERFACE_LINK_LIBRARIES "${PTHREADPOOL_LIBRARY}")
endif()
mark_as_advanced(XNNPACK_INCLUDE_DIR XNNPACK_LIBRARY PTHREADPOOL_LIBRARY)
