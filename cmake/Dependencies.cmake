# Required dependencies come from Debian packages (scripts/install-deps.sh installs them).
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.30)

# CBC (optional): hydraulis's stage 2 MILP (core/strategies/hydraulis_milp.cpp), the solver Hetu's
# Hydraulis uses through PuLP. Debian's coinor-libcbc-dev ships cbc.pc and the C API header
# Cbc_C_Interface.h; without it, stage 2 packs by LPT alone (the plan says which in info.stage2_solver).
set(ZEPPELIN_HAVE_CBC OFF)
pkg_check_modules(CBC QUIET IMPORTED_TARGET cbc)
if(CBC_FOUND)
  set(ZEPPELIN_HAVE_CBC ON)
  set(ZEPPELIN_CBC_SUMMARY "yes, ${CBC_VERSION}")
else()
  set(ZEPPELIN_CBC_SUMMARY "no (apt-get install coinor-libcbc-dev): hydraulis's stage 2 packs by LPT alone")
endif()

if(ZEPPELIN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(ZEPPELIN_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# --- MPI (optional) -----------------------------------------------------------
set(ZEPPELIN_HAVE_MPI OFF)
if(NOT ZEPPELIN_MPI STREQUAL "OFF")
  set(MPI_DETERMINE_LIBRARY_VERSION TRUE)  # MPI_CXX_LIBRARY_VERSION_STRING, for the report (cmake/Version.cmake)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(ZEPPELIN_HAVE_MPI ON)
  elseif(ZEPPELIN_MPI STREQUAL "ON")
    message(FATAL_ERROR "ZEPPELIN_MPI=ON but no MPI was found. Install it with "
                        "'apt-get install libopenmpi-dev openmpi-bin', or configure with -DZEPPELIN_MPI=AUTO|OFF.")
  endif()
endif()

# --- mimalloc (optional): the executable's allocator ---------------------------
# Sanitizers bring their own allocator, so a sanitized build never links it (AUTO turns it off; ON fails).
set(ZEPPELIN_HAVE_MIMALLOC OFF)
set(ZEPPELIN_MIMALLOC_SUMMARY "no (ZEPPELIN_MIMALLOC=${ZEPPELIN_MIMALLOC}): glibc malloc")
if(NOT ZEPPELIN_MIMALLOC STREQUAL "OFF")
  if(ZEPPELIN_SANITIZE)
    if(ZEPPELIN_MIMALLOC STREQUAL "ON")
      message(FATAL_ERROR "ZEPPELIN_MIMALLOC=ON cannot be combined with ZEPPELIN_SANITIZE=${ZEPPELIN_SANITIZE}: "
                          "the sanitizers replace the allocator. Configure with -DZEPPELIN_MIMALLOC=AUTO|OFF.")
    endif()
    set(ZEPPELIN_MIMALLOC_SUMMARY "no (sanitizers replace the allocator): glibc malloc")
  else()
    find_package(mimalloc 2.0 CONFIG QUIET)
    if(mimalloc_FOUND)
      set(ZEPPELIN_HAVE_MIMALLOC ON)
      set(ZEPPELIN_MIMALLOC_SUMMARY "yes, ${mimalloc_VERSION}")
    elseif(ZEPPELIN_MIMALLOC STREQUAL "ON")
      message(FATAL_ERROR "ZEPPELIN_MIMALLOC=ON but mimalloc was not found. Install it with "
                          "'apt-get install libmimalloc-dev', or configure with -DZEPPELIN_MIMALLOC=AUTO|OFF.")
    else()
      set(ZEPPELIN_MIMALLOC_SUMMARY "no (not found; apt-get install libmimalloc-dev): glibc malloc")
    endif()
  endif()
endif()

# Links `target` with mimalloc ahead of every other shared library (--no-as-needed: the executable names
# no mimalloc symbol, so the linker would otherwise drop it), so that its malloc and free, and thereby
# operator new and delete, replace glibc's for the whole process. core/common/throwing_new.cpp comes with
# it: mimalloc's own operator new aborts when memory runs out, that file's throws std::bad_alloc.
function(zb_link_allocator target)
  if(ZEPPELIN_HAVE_MIMALLOC)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/core/common/throwing_new.cpp)
    target_link_options(${target} PRIVATE "LINKER:--push-state,--no-as-needed" $<TARGET_FILE:mimalloc>
                        "LINKER:--pop-state")
  endif()
endfunction()

# --- CUDA (optional) ----------------------------------------------------------
set(ZEPPELIN_HAVE_CUDA OFF)
set(ZEPPELIN_HAVE_NCCL OFF)
set(ZEPPELIN_HAVE_CUPTI OFF)
set(ZEPPELIN_HAVE_NVTX OFF)
set(ZEPPELIN_HAVE_CUDNN OFF)
set(ZEPPELIN_CUDNN_SUMMARY "no (CUDA is off or not found)")
if(NOT ZEPPELIN_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(ZEPPELIN_HAVE_CUDA ON)
      find_library(ZB_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
      find_path(ZB_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
      if(ZB_NCCL_LIBRARY AND ZB_NCCL_INCLUDE)
        set(ZEPPELIN_HAVE_NCCL ON)
      endif()
      if(TARGET CUDA::cupti)
        set(ZEPPELIN_HAVE_CUPTI ON)
      endif()
      if(TARGET CUDA::nvtx3)
        set(ZEPPELIN_HAVE_NVTX ON)
      endif()
    endif()
  endif()
  # cuDNN fused attention (kernels/cuda/cudnn_sdpa*.cpp): libcudnn from the toolkit folder plus the
  # cudnn-frontend headers; absent frontend only turns ZEPPELIN_HAVE_CUDNN off.
  set(ZB_CUDNN_REPO_ROOT ${PROJECT_SOURCE_DIR})
  include(${PROJECT_SOURCE_DIR}/kernels/cmake/ZbCudnn.cmake)
  if(NOT ZEPPELIN_HAVE_CUDA AND ZEPPELIN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ZEPPELIN_CUDA=ON but no CUDA toolkit was found (looked for nvcc on PATH and in "
                        "/usr/local/cuda/bin). Install the CUDA toolkit, pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc, "
                        "or configure with -DZEPPELIN_CUDA=AUTO|OFF.")
  endif()
endif()
