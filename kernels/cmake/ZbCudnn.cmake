# Finds cuDNN (cudnn.h and libcudnn, normally inside the CUDA toolkit folder) and cudnn-frontend's
# header-only C++ graph API (cudnn_frontend.h, from the PyPI package nvidia-cudnn-frontend that
# scripts/install-deps.sh installs into .deps/cudnn-frontend). Included by cmake/Dependencies.cmake and by
# the standalone kernels/gpucheck/CMakeLists.txt, so both builds find the same files.
#
# In:  ZB_CUDNN_REPO_ROOT (the repository root), CUDAToolkit already found.
# Out: ZEPPELIN_HAVE_CUDNN ON/OFF; ZEPPELIN_CUDNN_SUMMARY ("cuDNN 9.19.0 + frontend 1.32.0" or why not);
#      the imported target zb::cudnn (cuDNN headers and library plus the frontend headers) when ON.
# Cache: ZEPPELIN_CUDNN_FRONTEND_DIR, a folder holding include/cudnn_frontend.h (or the include folder).
set(ZEPPELIN_CUDNN_FRONTEND_DIR "" CACHE PATH "cudnn-frontend: a folder with include/cudnn_frontend.h")
set(ZEPPELIN_HAVE_CUDNN OFF)
set(ZEPPELIN_CUDNN_SUMMARY "no CUDA toolkit")

function(_zb_header_version header prefix out)
  file(STRINGS "${header}" _lines REGEX "#define ${prefix}(MAJOR|MINOR|PATCH|PATCHLEVEL)[A-Z_]* +[0-9]+")
  set(_parts "")
  foreach(_key MAJOR MINOR PATCH)
    foreach(_line IN LISTS _lines)
      if(_line MATCHES "#define ${prefix}${_key}[A-Z_]* +([0-9]+)")
        list(APPEND _parts ${CMAKE_MATCH_1})
        break()
      endif()
    endforeach()
  endforeach()
  list(JOIN _parts "." _version)
  set(${out} "${_version}" PARENT_SCOPE)
endfunction()

if(CUDAToolkit_FOUND)
  # pip's site-packages: nvidia-cudnn-frontend puts include/ at its top; nvidia-cudnn-cu13 (PyTorch's
  # wheel, the only cuDNN on some GPU images) puts nvidia/cudnn/include and nvidia/cudnn/lib with only
  # the versioned libcudnn.so.9, no unversioned name.
  set(_zb_site_dirs "")
  find_program(ZB_PYTHON3 python3)
  if(ZB_PYTHON3)
    execute_process(
      COMMAND ${ZB_PYTHON3} -c "import site,sysconfig;print(';'.join([sysconfig.get_paths()['purelib'],sysconfig.get_paths()['platlib'],site.getusersitepackages()]+site.getsitepackages()))"
      OUTPUT_VARIABLE _zb_site_dirs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _zb_py_status)
    if(NOT _zb_py_status EQUAL 0)
      set(_zb_site_dirs "")
    endif()
  endif()
  set(_zb_cudnn_include_hints "")
  set(_zb_cudnn_library_hints "")
  foreach(_dir IN LISTS _zb_site_dirs)
    list(APPEND _zb_cudnn_include_hints "${_dir}/nvidia/cudnn/include")
    list(APPEND _zb_cudnn_library_hints "${_dir}/nvidia/cudnn/lib")
  endforeach()
  # The toolkit first (a cuDNN installed beside it), then the wheels.
  find_path(ZB_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include
            /usr/local/cuda/include /usr/include/x86_64-linux-gnu /usr/include ${_zb_cudnn_include_hints})
  find_library(ZB_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64 /usr/local/cuda/lib64
                     /usr/lib/x86_64-linux-gnu ${_zb_cudnn_library_hints})
  set(_zb_frontend_hints "")
  if(ZEPPELIN_CUDNN_FRONTEND_DIR)
    list(APPEND _zb_frontend_hints "${ZEPPELIN_CUDNN_FRONTEND_DIR}/include" "${ZEPPELIN_CUDNN_FRONTEND_DIR}")
  endif()
  list(APPEND _zb_frontend_hints "${ZB_CUDNN_REPO_ROOT}/.deps/cudnn-frontend/include")
  foreach(_dir IN LISTS _zb_site_dirs)
    list(APPEND _zb_frontend_hints "${_dir}/include" "${_dir}/cudnn/include")
  endforeach()
  # Only the hints: a stale cudnn_frontend.h elsewhere on the system should not win silently.
  find_path(ZB_CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h HINTS ${_zb_frontend_hints} NO_DEFAULT_PATH)

  if(NOT ZB_CUDNN_INCLUDE_DIR OR NOT ZB_CUDNN_LIBRARY)
    set(ZEPPELIN_CUDNN_SUMMARY "no (cudnn.h or libcudnn not found next to the CUDA toolkit or in pip's nvidia/cudnn)")
  else()
    set(_zb_cudnn_version_header "${ZB_CUDNN_INCLUDE_DIR}/cudnn_version.h")
    if(NOT EXISTS "${_zb_cudnn_version_header}")
      set(_zb_cudnn_version_header "${ZB_CUDNN_INCLUDE_DIR}/cudnn.h")
    endif()
    _zb_header_version("${_zb_cudnn_version_header}" "CUDNN_" ZB_CUDNN_VERSION)
    if(NOT ZB_CUDNN_VERSION MATCHES "^([0-9]+)\\.")
      set(ZEPPELIN_CUDNN_SUMMARY "no (cannot read the cuDNN version from ${_zb_cudnn_version_header})")
    elseif(CMAKE_MATCH_1 LESS 9)
      set(ZEPPELIN_CUDNN_SUMMARY "no (cuDNN ${ZB_CUDNN_VERSION} found; 9.x is required)")
    elseif(NOT TARGET CUDA::nvrtc)
      # cudnn-frontend 1.x compiles some kernels at run time and calls NVRTC directly.
      set(ZEPPELIN_CUDNN_SUMMARY "no (cuDNN ${ZB_CUDNN_VERSION} found, but not the toolkit's NVRTC, which "
                                 "cudnn-frontend links)")
    elseif(NOT ZB_CUDNN_FRONTEND_INCLUDE_DIR)
      set(ZEPPELIN_CUDNN_SUMMARY "no (cuDNN ${ZB_CUDNN_VERSION} found, cudnn_frontend.h not: run "
                                 "scripts/install-deps.sh or set -DZEPPELIN_CUDNN_FRONTEND_DIR)")
    else()
      _zb_header_version("${ZB_CUDNN_FRONTEND_INCLUDE_DIR}/cudnn_frontend_version.h" "CUDNN_FRONTEND_"
                         ZB_CUDNN_FRONTEND_VERSION)
      if(NOT ZB_CUDNN_FRONTEND_VERSION MATCHES "^1\\.")
        set(ZEPPELIN_CUDNN_SUMMARY "no (cudnn-frontend '${ZB_CUDNN_FRONTEND_VERSION}' in "
                                   "${ZB_CUDNN_FRONTEND_INCLUDE_DIR}; 1.x is required)")
      else()
        set(ZEPPELIN_HAVE_CUDNN ON)
        set(ZEPPELIN_CUDNN_SUMMARY "cuDNN ${ZB_CUDNN_VERSION} + frontend ${ZB_CUDNN_FRONTEND_VERSION} "
                                   "(${ZB_CUDNN_FRONTEND_INCLUDE_DIR})")
        if(NOT TARGET zb::cudnn)
          add_library(zb::cudnn INTERFACE IMPORTED)
          # SYSTEM: the frontend's own headers are not ours to keep -Wall -Wextra clean.
          set_target_properties(zb::cudnn PROPERTIES
            INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${ZB_CUDNN_FRONTEND_INCLUDE_DIR};${ZB_CUDNN_INCLUDE_DIR}"
            INTERFACE_INCLUDE_DIRECTORIES "${ZB_CUDNN_FRONTEND_INCLUDE_DIR};${ZB_CUDNN_INCLUDE_DIR}"
            INTERFACE_LINK_LIBRARIES "${ZB_CUDNN_LIBRARY};CUDA::cudart;CUDA::nvrtc")
        endif()
      endif()
    endif()
  endif()
endif()
string(REPLACE ";" "" ZEPPELIN_CUDNN_SUMMARY "${ZEPPELIN_CUDNN_SUMMARY}")
