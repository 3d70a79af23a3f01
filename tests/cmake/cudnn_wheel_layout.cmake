# ZbCudnn.cmake finds cuDNN in pip's wheel layout (nvidia/cudnn/include, nvidia/cudnn/lib/libcudnn.so.9
# with no unversioned name) when the toolkit has none: the layout of the GPU image's PyTorch, where the
# GPU check's fallback build must find it. In: REPO_ROOT, WORK_DIR, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY.
file(REMOVE_RECURSE ${WORK_DIR})
set(site ${WORK_DIR}/site)
file(MAKE_DIRECTORY ${site}/nvidia/cudnn/include ${site}/nvidia/cudnn/lib)
file(GLOB headers ${CUDNN_INCLUDE_DIR}/cudnn*.h)
file(COPY ${headers} DESTINATION ${site}/nvidia/cudnn/include)
get_filename_component(library_dir ${CUDNN_LIBRARY} DIRECTORY)
file(CREATE_LINK ${library_dir}/libcudnn.so.9 ${site}/nvidia/cudnn/lib/libcudnn.so.9 SYMBOLIC)
file(WRITE ${WORK_DIR}/python3 "#!/bin/sh\necho '${site}'\n")
file(CHMOD ${WORK_DIR}/python3 PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${REPO_ROOT}/tests/cmake/cudnn_wheel_layout -B ${WORK_DIR}/build
          -DREPO_ROOT=${REPO_ROOT} -DZB_PYTHON3=${WORK_DIR}/python3
          "-DHIDDEN_DIRS=${CUDNN_INCLUDE_DIR};${library_dir};/usr/local/cuda/include;/usr/local/cuda/lib64;/usr/include;/usr/include/x86_64-linux-gnu;/usr/lib/x86_64-linux-gnu;/usr/local/include"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(seen "exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the wheel-layout project failed:\n${seen}")
endif()
if(NOT out MATCHES "cudnn library: ${site}/nvidia/cudnn/lib/libcudnn.so.9")
  message(FATAL_ERROR "libcudnn.so.9 of the wheel layout not found:\n${seen}")
endif()
if(NOT out MATCHES "cudnn include: ${site}/nvidia/cudnn/include")
  message(FATAL_ERROR "cudnn.h of the wheel layout not found:\n${seen}")
endif()
if(NOT out MATCHES "cudnn summary: cuDNN 9\\.")
  message(FATAL_ERROR "the wheel's cuDNN not accepted:\n${seen}")
endif()
