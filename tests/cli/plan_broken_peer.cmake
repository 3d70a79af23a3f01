# A plan edited into nonsense (a send to rank 99 of 16) is bad input: exit 2, naming the file and the
# JSON path of the op. A plan of another cluster is bad input too, naming both world sizes, and so is a
# summary (`plan --detail summary`), which has no ops to run.
# Usage: cmake -DBENCH=... -DSCENARIO=... -DOTHER_SCENARIO=... -DWORK_DIR=... -P this
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/plan_support.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
dump_plan(ring-cp ${WORK_DIR}/plan.json --detail full)
file(READ ${WORK_DIR}/plan.json json)

# The first send of rank 0.
string(JSON ops LENGTH "${json}" ranks 0 ops)
math(EXPR last "${ops} - 1")
set(send_index "")
foreach(i RANGE ${last})
  string(JSON kind GET "${json}" ranks 0 ops ${i} kind)
  if(kind STREQUAL "send")
    set(send_index ${i})
    break()
  endif()
endforeach()
if(send_index STREQUAL "")
  message(FATAL_ERROR "rank 0 of the ring-cp plan has no send")
endif()
string(JSON broken SET "${json}" ranks 0 ops ${send_index} peer 99)
file(WRITE ${WORK_DIR}/broken.json "${broken}")
bench(2 run ${SCENARIO} --quiet --plan ${WORK_DIR}/broken.json --out ${WORK_DIR}/broken)
set(expected "broken.json: ranks\\[0\\]\\.ops\\[${send_index}\\]\\.peer: rank 99 does not exist: world_size is 16")
if(NOT bench_stderr MATCHES "${expected}")
  message(FATAL_ERROR "stderr does not name the broken peer ('${expected}'):\n${bench_stderr}")
endif()

bench(2 run ${OTHER_SCENARIO} --quiet --plan ${WORK_DIR}/plan.json --out ${WORK_DIR}/other)
if(NOT bench_stderr MATCHES "plan.json: world_size: the plan is for world_size 16 but the scenario's cluster has 8 GPUs")
  message(FATAL_ERROR "stderr does not name both world sizes:\n${bench_stderr}")
endif()

dump_plan(ring-cp ${WORK_DIR}/summary.json --detail summary)
bench(2 run ${SCENARIO} --quiet --plan ${WORK_DIR}/summary.json --out ${WORK_DIR}/summary)
if(NOT bench_stderr MATCHES "summary.json: detail: a summary plan lists no ops or layouts, so it cannot be run")
  message(FATAL_ERROR "stderr does not refuse the summary:\n${bench_stderr}")
endif()
