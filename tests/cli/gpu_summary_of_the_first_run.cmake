# scripts/gpu-summary.py over the logs the first GPU run brought back (docs/gpu-runs/2026-12-04-h200):
# real zb_gpucheck, nvidia-smi, qualify and calibrate output, so the summary's parsers are held to what a
# GPU prints, not to what we expect it to print. In: PYTHON, ROOT, WORK_DIR.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -E tar xzf ${ROOT}/docs/gpu-runs/2026-12-04-h200/logs.tar.gz
                WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot unpack the first run's logs")
endif()
execute_process(COMMAND ${PYTHON} ${ROOT}/scripts/gpu-summary.py --logs ${WORK_DIR}/logs
                        --verdicts "check=FAIL (exit 1);gemm=PASS" --json ${WORK_DIR}/summary.json
                        --text ${WORK_DIR}/summary.txt
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpu-summary.py failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${WORK_DIR}/summary.txt text)
foreach(expected "NVIDIA H200, driver 580.159.04" "correctness: 32 passed, 3 failed"
                 "cuBLASLt bf16 GEMM 8192x8192x8192: 1.240 ms, 886 TFLOP/s"
                 "65536 \\|     571.8 \\|     258.1 \\|   245.8" "qualify: qualified \\(0 below floor\\)"
                 "sm_mhz 345..1980")
  if(NOT text MATCHES "${expected}")
    message(FATAL_ERROR "the summary lacks '${expected}':\n${text}")
  endif()
endforeach()
