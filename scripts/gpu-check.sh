#!/usr/bin/env bash
# One GPU check for a bare H100/H200 machine (CMake, Ninja, nvcc 13, python3 with PyTorch; nothing from
# Debian). It builds the standalone kernel check (kernels/gpucheck: the CUDA kernels, the float64 CPU
# oracle and a driver without GoogleTest), runs every correctness case, then times the causal bf16
# forward against torch SDPA (flash backend) at 1k..64k tokens and prints the table. Under 8 minutes:
# every step has its own timeout. Everything goes to stdout; logs are also copied to $OUT/gpu-check when
# $OUT is set. Exit status: 0 all passed, 1 a check or timing failed, 2 a tool is missing.
#
#   scripts/gpu-check.sh                 # from anywhere; builds in build-gpucheck/ at the repo root
#   ZB_GPUCHECK_BUILD=/tmp/b scripts/gpu-check.sh
#   ZB_GPUCHECK_SKIP_TIMING=1 ...        # correctness only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ZB_GPUCHECK_BUILD:-$ROOT/build-gpucheck}"
LENGTHS=(1024 2048 4096 8192 16384 32768 65536)
HEADS=32
HEAD_DIM=128
LOGS="$(mktemp -d)"
STARTED=$SECONDS

say() { echo "[gpu-check +$((SECONDS - STARTED))s] $*"; }
copy_logs() {
  if [[ -n "${OUT:-}" ]]; then
    mkdir -p "$OUT/gpu-check" && cp -r "$LOGS"/. "$OUT/gpu-check/" && say "logs copied to $OUT/gpu-check"
  fi
}
trap copy_logs EXIT

# Runs "$@" under a timeout, teeing to a log; returns the command's status (124 on timeout).
step() {
  local seconds="$1" log="$2"
  shift 2
  set +e
  timeout --kill-after=10 "$seconds" "$@" 2>&1 | tee "$LOGS/$log"
  local status=${PIPESTATUS[0]}
  set -e
  if [[ $status -eq 124 ]]; then say "TIMEOUT after ${seconds}s: $*"; fi
  return "$status"
}

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "gpu-check: '$1' is not on PATH: $2" >&2
    exit 2
  fi
}
need cmake "install CMake >= 3.25"
need ninja "install Ninja (pip install ninja works)"
need python3 "install Python 3 with PyTorch"
need timeout "coreutils' timeout is required"
NVCC="${CUDACXX:-$(command -v nvcc || true)}"
if [[ -z "$NVCC" && -x /usr/local/cuda/bin/nvcc ]]; then NVCC=/usr/local/cuda/bin/nvcc; fi
if [[ -z "$NVCC" ]]; then
  echo "gpu-check: nvcc not found (looked at \$CUDACXX, PATH and /usr/local/cuda/bin)" >&2
  exit 2
fi

{
  echo "date      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit    $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "nvcc      $("$NVCC" --version | tail -n 2 | head -n 1)"
  echo "cmake     $(cmake --version | head -n 1)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu       $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -n 1)"
  else
    echo "gpu       (nvidia-smi not found)"
  fi
} | tee "$LOGS/environment.txt"

say "configure kernels/gpucheck -> $BUILD"
step 120 configure.log cmake -S "$ROOT/kernels/gpucheck" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER="$NVCC" || { say "FAIL: configure"; exit 1; }
say "build"
step 300 build.log cmake --build "$BUILD" -j "$(nproc)" || { say "FAIL: build"; exit 1; }

say "correctness against the float64 CPU oracle"
check_status=0
step 120 check.log "$BUILD/zb_gpucheck" check || check_status=$?
if grep -q "no usable CUDA device" "$LOGS/check.log"; then
  say "FAIL: no usable GPU on this machine (see above); nothing to time"
  exit 1
fi

timing_status=0
if [[ -z "${ZB_GPUCHECK_SKIP_TIMING:-}" ]]; then
  say "timing: ours, causal bf16, heads $HEADS, head_dim $HEAD_DIM"
  step 150 ours.log "$BUILD/zb_gpucheck" time "$HEADS" "$HEAD_DIM" "${LENGTHS[@]}" || timing_status=$?
  say "timing: torch SDPA (flash), same shapes"
  if ! python3 -c "import torch" >"$LOGS/torch-import.log" 2>&1; then
    say "FAIL: python3 cannot import torch:"
    cat "$LOGS/torch-import.log"
    exit 1
  fi
  step 150 table.log python3 "$ROOT/kernels/gpucheck/bench_sdpa.py" --lengths "${LENGTHS[@]}" --heads "$HEADS" \
    --head-dim "$HEAD_DIM" --ours "$LOGS/ours.log" --markdown "$LOGS/table.md" || timing_status=$?
fi

say "done: correctness $([[ $check_status -eq 0 ]] && echo PASS || echo "FAIL ($check_status)"), timing $(
  [[ $timing_status -eq 0 ]] && echo OK || echo "FAIL ($timing_status)")"
[[ $check_status -eq 0 && $timing_status -eq 0 ]]
