# `run` with several scenarios (issue 14, item 4): a folder runs every scenario in it, each writes its own
# report set under --out, and one combined table (JSON, Markdown, HTML) has a row per scenario whose
# figures are those of the scenario's report; a bad file anywhere stops the run before anything runs
# (exit 2, the file named); two scenarios that would write one folder are refused; --plan takes one.
# Usage: cmake -DBENCH=... -DFAILING=... -DWORK_DIR=... -P this
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/plan_support.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/library/nested)

# Two small scenarios, one in a subfolder; the failing-gate one makes the exit code 1.
file(WRITE ${WORK_DIR}/library/first.json [=[{
  "name": "first",
  "cluster": { "preset": "dgx-h200", "nodes": 1 },
  "model": { "preset": "llama-7b" },
  "workload": { "dataset": "wikipedia", "max_seq_len": 8192, "tokens_per_iteration": 65536, "iterations": 2 },
  "systems": ["zeppelin", "ring-cp", "uniform-cp"],
  "output": { "formats": ["json"] }
}
]=])
file(COPY ${FAILING} DESTINATION ${WORK_DIR}/library/nested)
file(WRITE ${WORK_DIR}/library/notes.txt "not a scenario: ignored")

bench(1 run ${WORK_DIR}/library --iterations 1 --out ${WORK_DIR}/out)
foreach(f combined.json combined.md combined.html first/report.json)
  if(NOT EXISTS ${WORK_DIR}/out/${f})
    message(FATAL_ERROR "run of a folder did not write ${f}:\n${bench_stdout}")
  endif()
endforeach()
file(READ ${WORK_DIR}/out/combined.json combined)
string(JSON rows LENGTH "${combined}" rows)
if(NOT rows EQUAL 2)
  message(FATAL_ERROR "expected 2 rows, got ${rows}:\n${combined}")
endif()
# Rows in path order: library/first.json before library/nested/...
string(JSON name0 GET "${combined}" rows 0 scenario)
if(NOT name0 STREQUAL "first")
  message(FATAL_ERROR "the first row is ${name0}, expected first (path order)")
endif()
# The row repeats the report's figure: zeppelin's mean iteration time (one iteration: its time).
iteration_seconds(${WORK_DIR}/out/first/report.json zeppelin from_report)
string(JSON from_table GET "${combined}" rows 0 subject_mean_iteration_seconds)
if(NOT from_table STREQUAL from_report)
  message(FATAL_ERROR "combined row says ${from_table} s, the report ${from_report} s")
endif()
string(JSON gates GET "${combined}" rows 1 gates_passed)
if(gates)
  message(FATAL_ERROR "the failing-gate scenario's row says its gates passed")
endif()
if(NOT bench_stdout MATCHES "combined table: .*library" OR NOT bench_stdout MATCHES "vs the best baseline over")
  message(FATAL_ERROR "the console does not show the combined table:\n${bench_stdout}")
endif()

# A bad scenario anywhere: exit 2 naming it, and nothing ran (no report of the good one).
file(WRITE ${WORK_DIR}/bad.json "{ \"name\": \"bad\", \"cluster\": { \"preset\": \"no-such-cluster\" } }")
bench(2 run ${WORK_DIR}/library/first.json ${WORK_DIR}/bad.json --out ${WORK_DIR}/out-bad)
if(NOT bench_stderr MATCHES "bad.json")
  message(FATAL_ERROR "the error does not name bad.json:\n${bench_stderr}")
endif()
if(EXISTS ${WORK_DIR}/out-bad/first)
  message(FATAL_ERROR "the good scenario ran although another was bad input")
endif()

# The same scenario twice writes one folder: refused.
bench(2 run ${WORK_DIR}/library/first.json ${WORK_DIR}/library/first.json --out ${WORK_DIR}/out-twice)
if(NOT bench_stderr MATCHES "as .*first.json does")
  message(FATAL_ERROR "two scenarios writing one folder were not refused:\n${bench_stderr}")
endif()
bench(2 run ${WORK_DIR}/library --plan ${WORK_DIR}/library/first.json)

# A folder with no scenario is bad input.
file(MAKE_DIRECTORY ${WORK_DIR}/empty)
bench(2 run ${WORK_DIR}/empty)
