# FindOpenCVDNN: OpenCV's dnn module and the core it needs (libopencv-dnn-dev,
# libopencv-core-dev), whose Debian packages ship no CMake package without libopencv-dev.
# Defines the imported target OpenCV::dnn.
find_path(OPENCVDNN_INCLUDE_DIR opencv2/dnn.hpp PATH_SUFFIXES opencv4)
find_library(OPENCVDNN_LIBRARY opencv_dnn)
find_library(OPENCVCORE_LIBRARY opencv_core)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenCVDNN REQUIRED_VARS OPENCVDNN_LIBRARY OPENCVCORE_LIBRARY
                                  OPENCVDNN_INCLUDE_DIR)
if(OpenCVDNN_FOUND AND NOT TARGET OpenCV::dnn)
  add_library(OpenCV::dnn UNKNOWN IMPORTED)
  set_target_properties(OpenCV::dnn PROPERTIES IMPORTED_LOCATION "${OPENCVDNN_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${OPENCVDNN_INCLUDE_DIR}"
                        INTERFACE_LINK_LIBRARIES "${OPENCVCORE_LIBRARY}")
endif()
mark_as_advanced(OPENCVDNN_INCLUDE_DIR OPENCVDNN_LIBRARY OPENCVCORE_LIBRARY)
