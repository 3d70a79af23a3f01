# A plan dumped with `plan --format json` and run with `run --plan` takes the same simulated time as the
# system that made it in a normal run: the file holds everything the executor needs, in the default
# compact form (runs, layouts written "groups") and in the full one alike.
# Usage: cmake -DBENCH=... -DSCENARIO=... "-DSYSTEMS=a;b" -DWORK_DIR=... -P this
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/plan_support.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
bench(0 run ${SCENARIO} --iterations 1 --quiet --format json --out ${WORK_DIR}/normal)
set(index 0)
foreach(label IN LISTS SYSTEMS)
  foreach(detail compact full)
    dump_plan(${label} ${WORK_DIR}/plan-${index}-${detail}.json --detail ${detail})
    bench(0 run ${SCENARIO} --iterations 1 --quiet --format json --plan ${WORK_DIR}/plan-${index}-${detail}.json
          --out ${WORK_DIR}/plan-${index}-${detail})
    iteration_seconds(${WORK_DIR}/normal/report.json ${label} planned)
    iteration_seconds(${WORK_DIR}/plan-${index}-${detail}/report.json ${label} replayed)
    if(NOT planned STREQUAL replayed)
      message(FATAL_ERROR "${label}: the normal run took ${planned} s, its dumped plan (${detail}) ${replayed} s")
    endif()
    message(STATUS "${label} (${detail}): ${planned} s both ways")
  endforeach()
  math(EXPR index "${index} + 1")
endforeach()
