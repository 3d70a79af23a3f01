#!/usr/bin/env bash
# Fuzzes the parsers of user files (tests/fuzz: scenario, lengths, plan) with libFuzzer, SECONDS each
# (default 60), after replaying every kept finding in tests/fuzz/regressions/<target>/. Exit 0 when no
# input crashed, hung (over 10 s), used more than 2 GiB or escaped as anything but a bad-input error;
# 1 otherwise, with the input saved under build-fuzz/findings/<target>/.
#   scripts/fuzz.sh [SECONDS]        BUILD_DIR (build-fuzz) and JOBS (2) come from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds_per_target="${1:-60}"
if ! [[ "$seconds_per_target" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS]  (seconds of fuzzing per target, default 60)" >&2
  exit 2
fi
build_dir="${BUILD_DIR:-build-fuzz}"
jobs="${JOBS:-2}"
targets=(scenario lengths plan)

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found; scripts/install-deps.sh installs it (Debian packages clang, libclang-rt-dev)" >&2
  exit 2
fi

# Only the fuzz targets and the libraries they link are built, at -O1 (libFuzzer's advice, and quicker to
# compile than -O2); tests and benchmarks are not even configured, the CLI and reports are never built.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DZEPPELIN_FUZZ=ON \
  -DZEPPELIN_BUILD_TESTS=OFF -DZEPPELIN_BUILD_BENCHMARKS=OFF -DZEPPELIN_MPI=OFF -DZEPPELIN_CUDA=OFF >/dev/null
cmake --build "$build_dir" -j "$jobs" --target zb_fuzz_targets

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
limits=(-timeout=10 -rss_limit_mb=2048)
failed=()

for target in "${targets[@]}"; do
  binary="$build_dir/tests/fuzz/zb_fuzz_$target"
  findings="$build_dir/findings/$target"
  work_corpus="$build_dir/corpus/$target"  # new inputs go here, never into the checked-in seeds
  log="$build_dir/fuzz-$target.log"
  mkdir -p "$findings" "$work_corpus"

  # Kept findings first: each must now be a clean run (files given one by one are run once, not fuzzed).
  regressions=()
  if [ -d "tests/fuzz/regressions/$target" ]; then
    mapfile -t regressions < <(find "tests/fuzz/regressions/$target" -type f | sort)
  fi
  if [ ${#regressions[@]} -gt 0 ]; then
    if "$binary" "${limits[@]}" "${regressions[@]}" >"$log.regressions" 2>&1; then
      echo "fuzz: $target: ${#regressions[@]} kept findings replayed, all fixed"
    else
      echo "fuzz: $target: a kept finding fails again (tests/fuzz/regressions/$target/):"
      tail -n 40 "$log.regressions"
      failed+=("$target (regression)")
    fi
  fi

  # A dictionary of the format's keys and values lets mutations reach past "unknown key".
  dictionary=()
  if [ -f "tests/fuzz/$target.dict" ]; then dictionary=(-dict="tests/fuzz/$target.dict"); fi
  if "$binary" "${limits[@]}" "${dictionary[@]}" -max_total_time="$seconds_per_target" -print_final_stats=1 \
       -artifact_prefix="$findings/" "$work_corpus" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    echo "fuzz: $target: ${runs:-?} inputs in ${seconds_per_target} s, no finding"
  else
    echo "fuzz: $target: FINDING (input under $findings/; log $log):"
    tail -n 60 "$log"
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in: ${failed[*]}. Fix the parser, keep the input under tests/fuzz/regressions/<target>/"
  echo "      and add a unit test that reproduces it (docs/ARCHITECTURE.md#fuzzing)."
  exit 1
fi
echo "fuzz: no findings"
