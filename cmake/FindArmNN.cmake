# FindArmNN: Arm NN (libarmnn-dev), which ships no CMake package. Its CpuRef backend
# (libarmnn-cpuref-backend22) is a dynamic backend the runtime loads from its own folder.
# Defines the imported target ArmNN::armnn.
find_path(ARMNN_INCLUDE_DIR armnn/ArmNN.hpp)
find_library(ARMNN_LIBRARY armnn)
# The folder of the CpuRef backend (ARMNN_DYNAMIC_BACKENDS_DIR), given to the runtime.
find_path(ARMNN_DYNAMIC_BACKENDS_DIR Arm_CpuRef_backend.so
          PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} /usr/lib PATH_SUFFIXES armnn22 armnn)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ArmNN REQUIRED_VARS ARMNN_LIBRARY ARMNN_INCLUDE_DIR
                                  ARMNN_DYNAMIC_BACKENDS_DIR)
if(ArmNN_FOUND AND NOT TARGET ArmNN::armnn)
  add_library(ArmNN::armnn UNKNOWN IMPORTED)
  set_target_properties(ArmNN::armnn PROPERTIES IMPORTED_LOCATION "${ARMNN_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${ARMNN_INCLUDE_DIR}")
endif()
mark_as_advanced(ARMNN_INCLUDE_DIR ARMNN_LIBRARY ARMNN_DYNAMIC_BACKENDS_DIR)
