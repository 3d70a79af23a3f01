# What `run` prints (issue 17, item 6), through the real binary:
#  - a hostile GPU name reaches the console escaped: no escape sequence, no line of its own;
#  - standard output on a full device exits 3 (--help too), and the reports are written all the same;
#  - `run | head -1` keeps the exit code (here 1, a failed gate) and the reports;
#  - a reader that closed the pipe before anything was printed is a write failure (exit 3, EPIPE named),
#    not a silent death by SIGPIPE that skipped the reports.
# Usage: cmake -DBENCH=... -DHOSTILE=... -DSCENARIO=... -DWORK_DIR=... -P this
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/plan_support.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(expect_report dir why)
  if(NOT EXISTS ${dir}/report.json)
    message(FATAL_ERROR "${why}: no report.json in ${dir}")
  endif()
endfunction()

bench(1 run ${HOSTILE} --out ${WORK_DIR}/hostile)
string(ASCII 27 escape)
string(ASCII 13 carriage_return)
foreach(character escape carriage_return)
  string(FIND "${bench_stdout}" "${${character}}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "stdout holds a raw ${character} from the GPU name:\n${bench_stdout}")
  endif()
endforeach()
if(bench_stdout MATCHES "\nALL GATES PASSED")
  message(FATAL_ERROR "the GPU name printed a line of its own:\n${bench_stdout}")
endif()
if(NOT bench_stdout MATCHES "H200\\\\x1b\\[2J\\\\x1b\\[H\\\\x0aALL GATES PASSED\\\\x0d")
  message(FATAL_ERROR "the GPU name is not shown escaped:\n${bench_stdout}")
endif()

execute_process(COMMAND ${BENCH} run ${SCENARIO} --out ${WORK_DIR}/full OUTPUT_FILE /dev/full
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc STREQUAL "3" OR NOT err MATCHES "standard output: cannot write: No space left on device")
  message(FATAL_ERROR "stdout on /dev/full: expected exit 3 naming the failed write, got ${rc}:\n${err}")
endif()
expect_report(${WORK_DIR}/full "stdout on /dev/full")
execute_process(COMMAND ${BENCH} --help OUTPUT_FILE /dev/full RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc STREQUAL "3")
  message(FATAL_ERROR "--help > /dev/full: expected exit code 3, got ${rc}:\n${err}")
endif()

execute_process(COMMAND ${BENCH} run ${SCENARIO} --out ${WORK_DIR}/head COMMAND head -1
                RESULTS_VARIABLE codes OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT codes STREQUAL "1;0")
  message(FATAL_ERROR "run | head -1: expected exit codes 1;0 (the failed gate), got ${codes}:\n${out}\n${err}")
endif()
if(NOT out MATCHES "^failing-gate")
  message(FATAL_ERROR "run | head -1 did not print the summary's first line:\n${out}")
endif()
expect_report(${WORK_DIR}/head "run | head -1")

# `true` exits at once: the pipe is closed long before the run has anything to print.
execute_process(COMMAND ${BENCH} run ${SCENARIO} --out ${WORK_DIR}/closed COMMAND true
                RESULTS_VARIABLE codes ERROR_VARIABLE err)
if(NOT codes STREQUAL "3;0" OR NOT err MATCHES "standard output: cannot write: Broken pipe")
  message(FATAL_ERROR "run | true: expected exit codes 3;0 naming the broken pipe, got ${codes}:\n${err}")
endif()
expect_report(${WORK_DIR}/closed "run | true")
