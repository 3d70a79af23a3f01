# The build facts go into generated headers so reports can say what produced them: build_info.hpp at
# configure time (versions of what the binary links), git_info.hpp on every build (cmake/git_info.cmake:
# the commit and whether the tree was dirty, which change without a reconfigure).
foreach(v ZEPPELIN_HAVE_CUDA ZEPPELIN_HAVE_NCCL ZEPPELIN_HAVE_MPI)
  if(${v})
    set(${v}_01 true)
  else()
    set(${v}_01 false)
  endif()
endforeach()
# "Open MPI v4.1.6, package: ..., ident: ..." → "Open MPI v4.1.6"; empty when MPI is not linked.
set(ZB_MPI_LIBRARY_VERSION "")
if(ZEPPELIN_HAVE_MPI AND MPI_CXX_LIBRARY_VERSION_STRING)
  string(REGEX REPLACE ",.*" "" ZB_MPI_LIBRARY_VERSION "${MPI_CXX_LIBRARY_VERSION_STRING}")
  string(STRIP "${ZB_MPI_LIBRARY_VERSION}" ZB_MPI_LIBRARY_VERSION)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/build_info.hpp.in ${PROJECT_BINARY_DIR}/generated/zb/build_info.hpp @ONLY)

set(_zb_git_info_header ${PROJECT_BINARY_DIR}/generated/zb/git_info.hpp)
add_custom_target(zb_git_info
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${_zb_git_info_header}
          -DTEMPLATE=${PROJECT_SOURCE_DIR}/cmake/git_info.hpp.in -P ${PROJECT_SOURCE_DIR}/cmake/git_info.cmake
  BYPRODUCTS ${_zb_git_info_header}
  COMMENT "Recording the git revision"
  VERBATIM)
add_library(zb_build_info INTERFACE)
target_include_directories(zb_build_info INTERFACE ${PROJECT_BINARY_DIR}/generated)
add_dependencies(zb_build_info zb_git_info)
