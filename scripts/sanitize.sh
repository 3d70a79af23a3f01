#!/usr/bin/env bash
# The reference backend's tests under AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer, part of ASan), in its
# own build folder (build-asan). Exit 0 when every test passed and no sanitizer wrote a report; 1 otherwise,
# with the reports printed (they are kept under build-asan/sanitizer-logs/).
#   scripts/sanitize.sh              BUILD_DIR (build-asan) and JOBS (2) come from the environment.
# Reports go to log files rather than to the tests' stderr, so a test that expects a failing exit status
# (the CLI's exit-code tests, MPI_Abort) cannot hide one: any file there fails the stage.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build-asan}"
jobs="${JOBS:-2}"

# The reference backend's test binaries only (its integration and backward tests, the MPI drivers, the
# launcher and NIC-counter tests), not the CLI, the reports, the simulator or the other unit tests: every
# test binary at once is about 300 compile steps, an estimated 20 minutes or more on 2 cores with the
# sanitizers, against a stage budget of about 12 (.ci/run stays under 45 minutes). These 121 steps: about
# 7 minutes estimated from a clean build's .ninja_log, then 56 tests in under a minute (measured). These are
# the binaries whose code moves bytes by hand: payload packing, the in-process and MPI transports, the wire format.
# -O1 -g1: less optimisation work than RelWithDebInfo's -O2 -g, line tables still name every frame's line.
targets=(zb_integration_tests zb_backward_tests zb_reference_driver zb_mpi_stuck_rank_driver zb_exec_host_tests)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DZEPPELIN_SANITIZE=address,undefined -DZEPPELIN_WERROR=ON -DZEPPELIN_CUDA=OFF -DZEPPELIN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"

logs="$PWD/$build_dir/sanitizer-logs"
suppressions="$PWD/tests/sanitizers"
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$suppressions/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"

# Left out: the tests of the binaries not built above (gtest_discover_tests names each <target>_NOT_BUILT;
# cli.*, validation.*, reference_check_scenario_* and browser.* run zeppelin-bench or the report renderer;
# reports.* is a configure-time check of git_info, no code of ours runs) and the MPI tests, which run on
# their own below.
not_built="_NOT_BUILT\$|^cli\\.|^validation\\.|^browser\\.|^reports\\.|^reference_check_scenario_"
# Also left out for time alone (measured on 2 shared cores, over 8 minutes each under the sanitizers): the
# random-scenario property tests (every strategy on a few dozen random scenarios, forward and backward: the
# same code paths as the named cases that do run, many times over) and reference_mpi_matches_in_process
# (4 ranks under mpirun with the slow unwinder, over 280 s).
slow="RandomScenarios\\.|^reference_mpi_matches_in_process\$"
mpi_tests="^reference_mpi_"
status=0
ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure -E "$not_built|$slow|$mpi_tests" || status=1
# Open MPI has no frame pointers: only the slow unwinder's stacks reach its libraries, which lsan.supp names
# (it costs every allocation a full unwind, so only these tests pay for it).
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer records a bogus dynamic-TLS range (e.g. 0x42a7-0x4000053a9)
# for a block of the libraries Open MPI loads, and its leak check at exit then faults reading it ("Tracer
# caught signal 11", exit 1) in a rank that exits normally. Without the interception, dynamic TLS is not
# scanned as a root: that can only add reports (memory reachable from there alone), never hide one.
ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0:intercept_tls_get_addr=0" ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure \
  -R "$mpi_tests" -E "$slow" || status=1

reports=("$logs"/*)
if [ -e "${reports[0]}" ]; then
  echo "sanitize: ${#reports[@]} sanitizer report(s) under $logs:"
  for report in "${reports[@]}"; do
    echo "--- $report"
    head -n 60 "$report"
  done
  status=1
fi
if [ "$status" -eq 0 ]; then echo "sanitize: every test passed, no sanitizer report"; fi
exit "$status"
