# A run never says "measured" for something that did not run (GitHub issue 35, item 4):
#  1. `run --backend cuda` of a one-GPU scenario (scenarios/one-h200.json, which fits its GPU):
#       built with the cuda executor, no usable GPU -> exit 3, "no usable CUDA device (cudaGetDeviceCount: …);
#                                                     use --backend sim", nothing printed or written that
#                                                     says "measured", no report;
#       built with it, on a GPU                     -> exit 0, "measured on GPUs", and the report's
#                                                     provenance.runtime names the versions asked at run time;
#       built without CUDA or NCCL                  -> exit 2, "not available in this build".
#  2. a scenario out of memory in every iteration (OOM_SCENARIO) on a measured backend (reference, which
#     runs on this CPU): exit 3 saying "backend reference measured nothing", no summary header, the report
#     still written; the same scenario on the simulator is a result: exit 0, the OOM row.
# Usage: cmake -DBENCH=zeppelin-bench -DSCENARIO=one-h200.json -DOOM_SCENARIO=f.json -DWORK_DIR=dir
#              -DEXECUTOR=ON|OFF -P this
file(REMOVE_RECURSE ${WORK_DIR})

execute_process(COMMAND ${BENCH} run ${SCENARIO} --backend cuda --iterations 1 --out ${WORK_DIR}/cuda
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(seen "exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(EXECUTOR)
  if(rc STREQUAL "3")
    if(NOT err MATCHES "backend cuda: no usable CUDA device \\(cudaGetDeviceCount: [^)]+\\); use --backend sim")
      message(FATAL_ERROR "exit 3 without the no-device message:\n${seen}")
    endif()
    if("${out}${err}" MATCHES "measured")
      message(FATAL_ERROR "a cuda run that could not start says \"measured\":\n${seen}")
    endif()
    if(EXISTS ${WORK_DIR}/cuda/report.json)
      message(FATAL_ERROR "a cuda run that could not start wrote a report:\n${seen}")
    endif()
  elseif(rc STREQUAL "0")
    if(NOT out MATCHES "figures are measured on GPUs")
      message(FATAL_ERROR "a cuda run on a GPU without the measured header:\n${seen}")
    endif()
    file(READ ${WORK_DIR}/cuda/report.json report)
    string(JSON nccl ERROR_VARIABLE missing GET "${report}" provenance runtime libraries nccl)
    if(missing OR NOT nccl MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
      message(FATAL_ERROR "a measured report without provenance.runtime.libraries.nccl (${missing}):\n${seen}")
    endif()
  else()
    message(FATAL_ERROR "expected exit 3 (no GPU) or 0 (a GPU):\n${seen}")
  endif()
else()
  if(NOT rc STREQUAL "2" OR NOT err MATCHES "backend cuda is not available in this build")
    message(FATAL_ERROR "expected exit 2 naming the missing toolkit:\n${seen}")
  endif()
endif()

execute_process(COMMAND ${BENCH} run ${OOM_SCENARIO} --backend reference --out ${WORK_DIR}/reference
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(seen "exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc STREQUAL "3")
  message(FATAL_ERROR "a measured run in which nothing ran must exit 3:\n${seen}")
endif()
if(NOT err MATCHES "backend reference measured nothing: no system ran in any iteration"
   OR NOT err MATCHES "zeppelin: out of GPU memory in 1 of 1 iterations")
  message(FATAL_ERROR "exit 3 without saying that nothing was measured, and why:\n${seen}")
endif()
if(out MATCHES "figures are")
  message(FATAL_ERROR "a run that measured nothing printed the summary's header:\n${seen}")
endif()
if(NOT EXISTS ${WORK_DIR}/reference/report.json)
  message(FATAL_ERROR "the report of a run that measured nothing (its OOM details) was not written:\n${seen}")
endif()

execute_process(COMMAND ${BENCH} run ${OOM_SCENARIO} --out ${WORK_DIR}/sim
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(seen "exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc STREQUAL "0" OR NOT out MATCHES "OOM \\(1 of 1 iterations\\)")
  message(FATAL_ERROR "an OOM system on the simulator is a result (exit 0, its OOM row):\n${seen}")
endif()
