# On a terminal `run` draws a progress bar on stderr (issue 17, item 6). Run under script(1), which gives
# it a pseudo-terminal, the bar must be erased before anything else is printed: the --verbose lines and
# the summary each start on a line of their own, never right after the bar's "ETA 0s".
# Usage: cmake -DSCRIPT=/usr/bin/script -DBENCH=... -DSCENARIO=... -DWORK_DIR=... -P this
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
string(ASCII 13 carriage_return)
foreach(flags "--verbose" "")
  execute_process(COMMAND ${SCRIPT} -qec "${BENCH} run ${SCENARIO} ${flags} --out ${WORK_DIR}/out" /dev/null
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "1")  # the scenario's gate fails
    message(FATAL_ERROR "run ${flags} on a terminal: expected exit code 1, got ${rc}:\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "ETA [0-9]+s")
    message(FATAL_ERROR "run ${flags} on a terminal drew no progress bar:\n${out}")
  endif()
  # After the bar's text comes the carriage return that starts erasing it, or nothing at all.
  if(out MATCHES "ETA [0-9]+s[^${carriage_return}]")
    message(FATAL_ERROR "run ${flags}: output continues on the progress bar's line:\n${CMAKE_MATCH_0}\n${out}")
  endif()
  if(flags STREQUAL "--verbose" AND NOT out MATCHES "zeppelin: iteration 0")
    message(FATAL_ERROR "run --verbose printed no iteration lines:\n${out}")
  endif()
  if(NOT out MATCHES "failing-gate")
    message(FATAL_ERROR "run ${flags} printed no summary:\n${out}")
  endif()
endforeach()

# A narrow terminal (40 columns): the bar is cut to 39 so that it never wraps (a wrapped line would be
# left behind at every redraw). And TERM=dumb, which has no "erase line": no bar, no escape sequences.
string(ASCII 27 escape)
string(REPEAT "[^${carriage_return}\n]" 39 thirty_nine_more)
execute_process(COMMAND ${SCRIPT} -qec "stty cols 40; ${BENCH} run ${SCENARIO} --out ${WORK_DIR}/out" /dev/null
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT out MATCHES "\\[[#.]+\\] zeppelin")
  message(FATAL_ERROR "run on a 40-column terminal drew no progress bar (exit ${rc}):\n${out}\n${err}")
endif()
if(out MATCHES "${escape}\\[K\\[${thirty_nine_more}")  # a bar line of 40 columns or more
  message(FATAL_ERROR "the progress bar is wider than a 40-column terminal:\n${CMAKE_MATCH_0}")
endif()
execute_process(COMMAND ${SCRIPT} -qec "TERM=dumb ${BENCH} run ${SCENARIO} --out ${WORK_DIR}/out" /dev/null
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(out MATCHES "${escape}" OR out MATCHES "ETA [0-9]+s")
  message(FATAL_ERROR "TERM=dumb still got the progress bar or escape sequences (exit ${rc}):\n${out}")
endif()
if(NOT out MATCHES "failing-gate")
  message(FATAL_ERROR "TERM=dumb: no summary:\n${out}")
endif()
