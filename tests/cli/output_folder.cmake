# An --out that cannot take the reports fails before any work (issue 17, item 8): exit 3, the message
# names the folder and what is wrong, and --verbose shows that no iteration started. A path under a
# regular file and a device stand for unwritable folders (chmod does not stop root, who runs CI).
# Then: labels that sanitize to one file name keep a trace each, and a second run replaces the set.
# Usage: cmake -DBENCH=... -DSCENARIO=... -DCOLLIDING=... -DWORK_DIR=... -P this
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/plan_support.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(WRITE ${WORK_DIR}/a-file "not a folder")

foreach(case "${WORK_DIR}/a-file/out|${WORK_DIR}/a-file is not a folder"
             "/dev/full|/dev/full: the output folder exists and is not a folder")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 out)
  list(GET parts 1 expected)
  bench(3 run ${SCENARIO} --verbose --out ${out})
  string(FIND "${bench_stderr}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "--out ${out}: stderr does not say '${expected}':\n${bench_stderr}")
  endif()
  if(bench_stderr MATCHES "iteration 0")
    message(FATAL_ERROR "--out ${out}: the run started before the output folder was refused:\n${bench_stderr}")
  endif()
endforeach()

bench(0 run ${COLLIDING} --quiet --out ${WORK_DIR}/traces)
file(GLOB traces RELATIVE ${WORK_DIR}/traces ${WORK_DIR}/traces/*)
list(SORT traces)
if(NOT traces STREQUAL "report.json;trace-RING_CP-3.json;trace-ring_cp-2.json;trace-ring_cp.json")
  message(FATAL_ERROR "expected one trace per system, got: ${traces}")
endif()

# The same folder with only the JSON report: the traces of the first run do not survive beside it.
file(READ ${COLLIDING} scenario)
string(REGEX REPLACE "\"formats\": \\[[^]]*\\]" "\"formats\": [\"json\"]" json_only "${scenario}")
file(WRITE ${WORK_DIR}/json-only.json "${json_only}")
bench(0 run ${WORK_DIR}/json-only.json --quiet --out ${WORK_DIR}/traces)
file(GLOB left RELATIVE ${WORK_DIR}/traces ${WORK_DIR}/traces/*)
if(NOT left STREQUAL "report.json")
  message(FATAL_ERROR "a new report set left files of the previous one: ${left}")
endif()
file(GLOB staging ${WORK_DIR}/.traces.*)
if(staging)
  message(FATAL_ERROR "staging folders left behind: ${staging}")
endif()
