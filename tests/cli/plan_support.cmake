# Helpers of the CLI scripts (cmake -P): run zeppelin-bench, check its exit code, read a report's
# iteration time.

# Runs BENCH with the remaining arguments; fails unless it exits with `expected`. Sets bench_stdout and
# bench_stderr.
function(bench expected)
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${expected}")
    message(FATAL_ERROR "zeppelin-bench ${ARGN}\nexpected exit code ${expected}, got ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  set(bench_stdout "${out}" PARENT_SCOPE)
  set(bench_stderr "${err}" PARENT_SCOPE)
endfunction()

# Dumps the plan of `label` for iteration 0 of SCENARIO into `file`; further arguments go to `plan`
# (`--detail full`).
function(dump_plan label file)
  execute_process(COMMAND ${BENCH} plan ${SCENARIO} --system ${label} --format json ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_FILE ${file} ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "plan --system ${label} failed (${rc}):\n${err}")
  endif()
endfunction()

# The first iteration's simulated seconds of the system labelled `label` in a report.json.
function(iteration_seconds report label out_var)
  file(READ ${report} json)
  string(JSON count LENGTH "${json}" systems)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON l GET "${json}" systems ${i} label)
    if(l STREQUAL label)
      string(JSON seconds GET "${json}" systems ${i} samples iteration_seconds 0)
      set(${out_var} "${seconds}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${report} has no system labelled ${label}")
endfunction()
