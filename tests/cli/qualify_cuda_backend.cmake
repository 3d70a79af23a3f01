# `qualify --backend cuda` and `calibrate --backend cuda` on one H200's scenario, where they cannot run,
# end with a message a user can act on and write nothing:
#   built with the GPU probes, no usable GPU -> exit 3, "<command> --backend cuda: no usable CUDA device
#                                               (cudaGetDeviceCount: …)", and --backend reference advised;
#   built without CUDA or NCCL               -> exit 2, "<command> --backend cuda is not available in this build".
# On a machine with a GPU the qualification runs: exit 0 or 1, with qualify.json written.
# Usage: cmake -DBENCH=zeppelin-bench -DSCENARIO=one-h200.json -DWORK_DIR=dir -DPROBES=ON|OFF -P this
file(REMOVE_RECURSE ${WORK_DIR})
foreach(command qualify calibrate)
  if(command STREQUAL "qualify")
    set(args qualify ${SCENARIO} --backend cuda --out ${WORK_DIR}/qualify)
    set(written ${WORK_DIR}/qualify/qualify.json)
  else()
    set(args calibrate ${SCENARIO} --backend cuda --out ${WORK_DIR}/profile.json)
    set(written ${WORK_DIR}/profile.json)
  endif()
  file(MAKE_DIRECTORY ${WORK_DIR})
  execute_process(COMMAND ${BENCH} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(seen "${command}: exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  if(PROBES)
    if(rc STREQUAL "3")
      if(NOT err MATCHES "${command} --backend cuda: no usable CUDA device \\(cudaGetDeviceCount: [^)]+\\)"
         OR NOT err MATCHES "--backend reference" OR err MATCHES "--backend sim")
        message(FATAL_ERROR "exit 3 without the no-device message and its advice:\n${seen}")
      endif()
      if(EXISTS ${written})
        message(FATAL_ERROR "a refused ${command} wrote ${written}:\n${seen}")
      endif()
    elseif((rc STREQUAL "0" OR rc STREQUAL "1") AND EXISTS ${written})
      message(STATUS "a GPU is present: ${command} ran (exit ${rc})")
    else()
      message(FATAL_ERROR "expected exit 3 (no GPU), or 0/1 with ${written} (a GPU):\n${seen}")
    endif()
  else()
    if(NOT rc STREQUAL "2" OR NOT err MATCHES "${command} --backend cuda is not available in this build")
      message(FATAL_ERROR "expected exit 2 naming what the build lacks:\n${seen}")
    endif()
  endif()
endforeach()
