# Finds NCCL's header for zb_gpucheck's `interference` subcommand. Only nccl.h is needed at build time:
# the driver loads libnccl.so.2 with dlopen at run time (kernels/gpucheck/nccl_runtime.cpp), so a prebuilt
# zb_gpucheck always loads, with or without NCCL on the machine, and never falls back to a source build
# on the GPU machine for want of libnccl (scripts/gpu-check.sh). Included by kernels/CMakeLists.txt and by
# the standalone kernels/gpucheck/CMakeLists.txt, so both builds find the same header.
#
# Where: the CUDA toolkit's include folder, $NCCL_HOME/include (or -DZB_NCCL_HOME), and pip's wheel
# layout nvidia/nccl/include under python3's site-packages (nvidia-nccl-cu13, PyTorch's NCCL).
# In:  CUDAToolkit already found; ZbCudnn.cmake already included (its _zb_header_version reads the version).
# Out: ZB_HAVE_NCCL ON/OFF; ZB_NCCL_SUMMARY (the header's version and folder, or why not);
#      the imported target zb::nccl_headers (include folder, no library) when ON.
set(ZB_NCCL_HOME "$ENV{NCCL_HOME}" CACHE PATH "NCCL: a folder with include/nccl.h (default: \$NCCL_HOME)")
set(ZB_HAVE_NCCL OFF)
set(ZB_NCCL_SUMMARY "no CUDA toolkit")

if(CUDAToolkit_FOUND)
  set(_zb_nccl_hints "")
  if(ZB_NCCL_HOME)
    list(APPEND _zb_nccl_hints "${ZB_NCCL_HOME}/include" "${ZB_NCCL_HOME}")
  endif()
  list(APPEND _zb_nccl_hints ${CUDAToolkit_INCLUDE_DIRS} "${CUDAToolkit_LIBRARY_ROOT}/include"
       /usr/local/cuda/include /usr/include)
  find_program(ZB_NCCL_PYTHON3 python3)
  if(ZB_NCCL_PYTHON3)
    execute_process(
      COMMAND ${ZB_NCCL_PYTHON3} -c "import site,sysconfig;print(';'.join([sysconfig.get_paths()['purelib'],sysconfig.get_paths()['platlib'],site.getusersitepackages()]+site.getsitepackages()))"
      OUTPUT_VARIABLE _zb_nccl_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _zb_nccl_py)
    if(_zb_nccl_py EQUAL 0)
      foreach(_dir IN LISTS _zb_nccl_site)
        list(APPEND _zb_nccl_hints "${_dir}/nvidia/nccl/include")
      endforeach()
    endif()
  endif()
  find_path(ZB_NCCL_HEADER_DIR nccl.h HINTS ${_zb_nccl_hints} NO_DEFAULT_PATH)
  if(NOT ZB_NCCL_HEADER_DIR)
    set(ZB_NCCL_SUMMARY "no (nccl.h not found in the CUDA toolkit, NCCL_HOME or pip's nvidia/nccl)")
  else()
    _zb_header_version("${ZB_NCCL_HEADER_DIR}/nccl.h" "NCCL_" _zb_nccl_version)
    set(ZB_HAVE_NCCL ON)
    set(ZB_NCCL_SUMMARY "nccl.h ${_zb_nccl_version} (${ZB_NCCL_HEADER_DIR}); libnccl.so.2 loaded at run time")
    if(NOT TARGET zb::nccl_headers)
      add_library(zb::nccl_headers INTERFACE IMPORTED)
      # SYSTEM: NCCL's header is not ours to keep -Wall -Wextra -Wpedantic clean.
      set_target_properties(zb::nccl_headers PROPERTIES
        INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${ZB_NCCL_HEADER_DIR}"
        INTERFACE_INCLUDE_DIRECTORIES "${ZB_NCCL_HEADER_DIR}"
        INTERFACE_COMPILE_DEFINITIONS "ZB_HAVE_NCCL=1"
        INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
    endif()
  endif()
endif()
