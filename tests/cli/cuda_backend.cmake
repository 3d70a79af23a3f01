# `run --backend cuda` on a machine that cannot run it ends with a message a user can act on, before any
# report is written:
#   built with the cuda executor, no usable GPU  -> exit 3, "no usable CUDA device (cudaGetDeviceCount: …)"
#                                                   and "use --backend sim";
#   built with it, a GPU but no launcher         -> exit 2, the quickstart's 16 GPUs against one process
#                                                   ("one process per GPU", "mpirun -np 16");
#   built without CUDA or NCCL                   -> exit 2, "not available in this build".
# Usage: cmake -DBENCH=zeppelin-bench -DSCENARIO=quickstart.json -DWORK_DIR=dir -DEXECUTOR=ON|OFF -P this
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${BENCH} run ${SCENARIO} --backend cuda --iterations 1 --quiet --out ${WORK_DIR}/out
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(seen "exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(EXECUTOR)
  if(rc STREQUAL "3")
    if(NOT err MATCHES "backend cuda: no usable CUDA device \\(cudaGetDeviceCount: [^)]+\\); use --backend sim")
      message(FATAL_ERROR "exit 3 without the no-device message:\n${seen}")
    endif()
  elseif(rc STREQUAL "2")
    if(NOT err MATCHES "one process per GPU" OR NOT err MATCHES "mpirun -np 16")
      message(FATAL_ERROR "exit 2 (a GPU is present) without the launch message:\n${seen}")
    endif()
  else()
    message(FATAL_ERROR "expected exit 3 (no GPU) or 2 (a GPU, one process for 16 ranks):\n${seen}")
  endif()
else()
  if(NOT rc STREQUAL "2" OR NOT err MATCHES "backend cuda is not available in this build")
    message(FATAL_ERROR "expected exit 2 naming the missing toolkit:\n${seen}")
  endif()
endif()
if(EXISTS ${WORK_DIR}/out/report.json)
  message(FATAL_ERROR "a refused cuda run wrote a report:\n${seen}")
endif()
