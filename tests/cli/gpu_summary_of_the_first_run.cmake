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
# The first run predates `zb_gpucheck interference`: its lines, as interference.cpp prints them (words after
# " -- " shortened), join the real logs, so the summary's parser of them is held to the printed format.
file(WRITE ${WORK_DIR}/logs/interference.log
  "interference gemm alone m=8192 n=8192 k=8192 ms=1.2400 tflops=886.7 -- cuBLASLt bf16 GEMM per launch\n"
  "interference copy alone ctas=16 bytes=536870912 ms=1.5000 GBps=715.8 -- grid-stride copy\n"
  "interference gemm with=copy ctas=16 ms=1.3500 tflops=814.5 slowdown=0.0887 copy_GBps=650.2 comm_busy=0.998 alone_before_ms=1.2380 alone_after_ms=1.2420 -- beside\n"
  "interference sdpa skipped -- built without cudnn-frontend: no cuDNN SDPA to overlap\n"
  "interference nccl library=/usr/lib/python3/nvidia/nccl/lib/libnccl.so.2 version=2.27.7 -- dlopen\n"
  "interference nccl-sendrecv alone bytes=67108864 ms=0.0600 GBps=2236.9 -- self send/recv\n"
  "interference gemm with=nccl-sendrecv bytes=67108864 ms=1.4500 tflops=758.3 slowdown=0.1694 comm_GBps=2000.0 comm_busy=0.990 -- beside NCCL\n"
  "latency nccl-sendrecv bytes=8 us=6.50 -- average\n"
  "latency copy-kernel ctas=1 bytes=8 us=2.10 -- average\n"
  "interference summary comm_compute_slowdown=0.1694 source=nccl-sendrecv -- GEMM beside / alone - 1\n"
  "interference copy-resident alone ctas=16 ms=20.1500 GBps=1402.3 sms=16 -- resident copy alone\n"
  "interference gemm with=copy-resident ctas=16 ms=1.7000 tflops=646.8 slowdown=0.3710 copy_GBps=900.4 comm_busy=1.000 sms=16 alone_before_ms=1.2390 alone_after_ms=1.2410 -- comm first\n"
  "interference time s=31.4 -- the subcommand's wall time\n"
  "interference summary-resident comm_compute_slowdown=0.3710 source=copy-resident-ctas16 -- comm first\n")
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
                 "sm_mhz 345..1980" "interference: comm_compute_slowdown 0.169 \\(nccl-sendrecv\\)"
                 "gemm with copy ctas 16: 1.350 ms, TFLOP/s 814, slowdown 0.089, copy GB/s 650, comm busy 0.998"
                 "latency \\(us, back-to-back\\): nccl-sendrecv 8 B 6.50, copy-kernel 8 B 2.10"
                 "skipped: sdpa: built without cudnn-frontend"
                 "interference: comm_compute_slowdown comm-first 0.371 \\(copy-resident-ctas16\\)"
                 "gemm with copy-resident ctas 16: 1.700 ms, TFLOP/s 647, slowdown 0.371, copy GB/s 900, comm busy 1.000, on 16 SMs, alone before/after 1.239/1.241 ms"
                 "alone before/after 1.238/1.242 ms" "copy-resident alone ctas 16: 20.150 ms, GB/s 1402, on 16 SMs"
                 "wall time: 31.4 s")
  if(NOT text MATCHES "${expected}")
    message(FATAL_ERROR "the summary lacks '${expected}':\n${text}")
  endif()
endforeach()
file(READ ${WORK_DIR}/summary.json json)
string(JSON resident GET "${json}" interference comm_compute_slowdown_resident)
string(JSON resident_source GET "${json}" interference source_resident)
if(NOT resident EQUAL 0.371 OR NOT resident_source STREQUAL "copy-resident-ctas16")
  message(FATAL_ERROR "summary.json's comm-first slowdown: ${resident} (${resident_source})")
endif()
