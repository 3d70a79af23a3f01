# Every optional part of the build is an explicit option; AUTO means "use it when it is found".
set(ZEPPELIN_CUDA AUTO CACHE STRING "Build the CUDA kernels and executor: AUTO, ON or OFF")
set_property(CACHE ZEPPELIN_CUDA PROPERTY STRINGS AUTO ON OFF)
set(ZEPPELIN_MPI AUTO CACHE STRING "Build the MPI transport: AUTO, ON or OFF")
set_property(CACHE ZEPPELIN_MPI PROPERTY STRINGS AUTO ON OFF)
# The planner makes tens of thousands of small allocations per plan (a 1024-GPU plan, hundreds of
# thousands); mimalloc serves them in a fraction of glibc's instructions (docs/STRATEGIES.md, "Planning time").
set(ZEPPELIN_MIMALLOC AUTO CACHE STRING "Link the zeppelin-bench executable with mimalloc: AUTO, ON or OFF")
set_property(CACHE ZEPPELIN_MIMALLOC PROPERTY STRINGS AUTO ON OFF)
set(ZEPPELIN_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address,undefined")
option(ZEPPELIN_WERROR "Treat warnings as errors (CI sets this)" OFF)
option(ZEPPELIN_BUILD_TESTS "Build the GoogleTest suites" ON)
option(ZEPPELIN_BUILD_BENCHMARKS "Build the Google Benchmark targets" ON)

foreach(opt ZEPPELIN_CUDA ZEPPELIN_MPI ZEPPELIN_MIMALLOC)
  if(NOT ${opt} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${opt}=${${opt}} is not valid: use AUTO, ON or OFF")
  endif()
endforeach()
