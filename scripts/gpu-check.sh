#!/usr/bin/env bash
# One GPU check for a bare H100/H200 machine (CMake, Ninja, nvcc 13 with cuDNN 9 in the toolkit; python3
# with PyTorch optional; nothing from Debian). It builds the standalone kernel check (kernels/gpucheck:
# the CUDA kernels, the cuDNN SDPA when cudnn-frontend's headers are found, cuBLASLt, the float64 CPU
# oracle and a driver without GoogleTest), runs every correctness case with per-element tolerances
# (own attention, LSE merge with empty sides, pack, GEMM, cuDNN SDPA forward/backward, a long causal
# case on sampled rows), times attention at 8k..64k tokens (cuDNN forward and backward, the own forward,
# torch SDPA when torch imports; its absence is not a failure) and a cuBLASLt GEMM, and runs one small
# case of each under compute-sanitizer when the tool exists. At most 8 minutes: steps share one time
# budget and later steps are skipped (and said so) when it runs out. Everything goes to stdout; logs are
# also copied to $OUT/gpu-check when $OUT is set. Exit status: 0 all passed, 1 a check or timing failed,
# 2 a tool is missing.
#
# It also runs `zeppelin-bench qualify scenarios/one-h200.json --backend cuda` (GEMM and attention
# figures against the dgx-h200 preset's nominal peak; a world of one has no link) right after the
# correctness check, and prints its result. The full CLI needs Debian packages (SimGrid, fmt, CLI11) that
# a bare GPU machine lacks, so it comes prebuilt: $ZB_BENCH, or .deps/gpu-bundle/bin/zeppelin-bench,
# which scripts/gpu-bundle.sh builds (where those packages are) with the shared libraries it needs
# beside it; carry .deps/ to the GPU machine. Without either, the qualify step FAILS saying so.
#
# cudnn-frontend headers: .deps/cudnn-frontend (scripts/install-deps.sh puts them there; carry that
# folder to the GPU machine), or ZB_CUDNN_FRONTEND_DIR=/path/with/include, or pip's site-packages.
# Without them the cuDNN cases are skipped and the summary says so.
#
#   scripts/gpu-check.sh                 # from anywhere; builds in build-gpucheck/ at the repo root
#   ZB_GPUCHECK_BUILD=/tmp/b scripts/gpu-check.sh
#   ZB_GPUCHECK_SKIP_TIMING=1 ...        # correctness only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ZB_GPUCHECK_BUILD:-$ROOT/build-gpucheck}"
LENGTHS=(8192 16384 32768 65536)
BUDGET=470  # seconds for everything, under the 8-minute limit
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

# Runs "$@" under a timeout of at most CAP seconds and what is left of the budget, teeing to a log;
# returns the command's status (124 on timeout, 125 when no budget was left to start it).
step() {
  local cap="$1" log="$2"
  shift 2
  local left=$((BUDGET - (SECONDS - STARTED)))
  local seconds=$((cap < left ? cap : left))
  if [[ $seconds -lt 10 ]]; then
    say "SKIPPED (time budget spent): $*"
    return 125
  fi
  set +e
  timeout --kill-after=5 "$seconds" "$@" 2>&1 | tee "$LOGS/$log"
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

frontend_args=()
if [[ -n "${ZB_CUDNN_FRONTEND_DIR:-}" ]]; then frontend_args=(-DZEPPELIN_CUDNN_FRONTEND_DIR="$ZB_CUDNN_FRONTEND_DIR"); fi
say "configure kernels/gpucheck -> $BUILD"
step 90 configure.log cmake -S "$ROOT/kernels/gpucheck" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER="$NVCC" "${frontend_args[@]}" || { say "FAIL: configure"; exit 1; }
cudnn_line="$(grep -m1 'zb_gpucheck: cuDNN SDPA' "$LOGS/configure.log" || echo 'zb_gpucheck: cuDNN SDPA unknown')"
say "${cudnn_line#*-- }"
say "build"
step 240 build.log cmake --build "$BUILD" -j "$(nproc)" || { say "FAIL: build"; exit 1; }

say "correctness against the float64 CPU oracle (per-element tolerances)"
check_status=0
step 150 check.log "$BUILD/zb_gpucheck" check || check_status=$?
if grep -q "no usable CUDA device" "$LOGS/check.log"; then
  say "FAIL: no usable GPU on this machine (see above); nothing to time"
  exit 1
fi

# qualify --backend cuda on one H200: the prebuilt CLI with its bundled libraries first on the library
# path, then the toolkit's (cuBLASLt, cudart, CUPTI) and any pip-installed NVIDIA libraries (NCCL, cuDNN).
qualify_status=0
BENCH="${ZB_BENCH:-$ROOT/.deps/gpu-bundle/bin/zeppelin-bench}"
if [[ -x "$BENCH" ]]; then
  cuda_root="$(dirname "$(dirname "$NVCC")")"
  library_path="$(dirname "$(dirname "$BENCH")")/lib:$cuda_root/lib64:$cuda_root/lib:$cuda_root/extras/CUPTI/lib64"
  if command -v python3 >/dev/null 2>&1; then
    for dir in $(python3 -c 'import glob, site; print(" ".join(d for p in site.getsitepackages() for d in glob.glob(p + "/nvidia/*/lib")))' 2>/dev/null); do
      library_path="$library_path:$dir"
    done
  fi
  say "qualify --backend cuda scenarios/one-h200.json ($BENCH)"
  missing="$(LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$BENCH" | grep 'not found' || true)"
  if [[ -n "$missing" ]]; then
    say "FAIL: qualify not run, libraries not found:"; echo "$missing"
    qualify_status=2
  else
    LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" step 150 qualify.log "$BENCH" qualify \
      "$ROOT/scenarios/one-h200.json" --backend cuda --out "$LOGS/qualify" || qualify_status=$?
  fi
else
  say "FAIL: qualify not run: no zeppelin-bench at $BENCH (run scripts/gpu-bundle.sh where its Debian packages are, and carry .deps/, or set ZB_BENCH)"
  qualify_status=2
fi

timing_status=0
have_torch=0
if [[ -z "${ZB_GPUCHECK_SKIP_TIMING:-}" ]]; then
  say "timing: cuDNN SDPA causal bf16 forward+backward, heads $HEADS, head_dim $HEAD_DIM"
  step 90 cudnn.log "$BUILD/zb_gpucheck" time-cudnn "$HEADS" "$HEAD_DIM" "${LENGTHS[@]}" || timing_status=$?
  say "timing: own kernel causal bf16 forward, same shapes"
  step 60 ours.log "$BUILD/zb_gpucheck" time "$HEADS" "$HEAD_DIM" "${LENGTHS[@]}" || timing_status=$?
  say "timing: cuBLASLt bf16 GEMM 8192x8192x8192"
  step 30 gemm.log "$BUILD/zb_gpucheck" time-gemm 8192 8192 8192 || timing_status=$?
  table_args=(--lengths "${LENGTHS[@]}" --heads "$HEADS" --head-dim "$HEAD_DIM" --ours "$LOGS/ours.log"
              --cudnn "$LOGS/cudnn.log" --markdown "$LOGS/table.md")
  if command -v python3 >/dev/null 2>&1 && python3 -c "import torch" >"$LOGS/torch-import.log" 2>&1; then
    have_torch=1
    say "timing: torch SDPA (flash), same shapes, and the table"
  else
    say "torch is not importable (not a failure): the table has no SDPA column"
    table_args+=(--no-torch)
  fi
  if command -v python3 >/dev/null 2>&1; then
    step 90 table.log python3 "$ROOT/kernels/gpucheck/bench_sdpa.py" "${table_args[@]}" || timing_status=$?
  else
    say "python3 missing: raw timing lines are in cudnn.log and ours.log"
  fi
fi

sanitizer_status=0
SANITIZER="$(command -v compute-sanitizer || true)"
for candidate in "$(dirname "$NVCC")/compute-sanitizer" "$(dirname "$NVCC")/../compute-sanitizer/compute-sanitizer"; do
  if [[ -z "$SANITIZER" && -x "$candidate" ]]; then SANITIZER="$candidate"; fi
done
if [[ -n "$SANITIZER" ]]; then
  say "compute-sanitizer memcheck: one small case of each kernel"
  step 90 sanitizer.log "$SANITIZER" --tool memcheck --error-exitcode 3 "$BUILD/zb_gpucheck" sanitize ||
    sanitizer_status=$?
else
  say "compute-sanitizer not found: skipped"
fi

verdict() { [[ $1 -eq 0 ]] && echo "$2" || echo "FAIL ($1)"; }
say "done: correctness $(verdict $check_status PASS), qualify $(
  [[ $qualify_status -eq 0 ]] && echo qualified || { [[ $qualify_status -eq 1 ]] && echo 'NOT QUALIFIED (1)' || echo "FAIL ($qualify_status)"; }
), timing $(verdict $timing_status OK) (torch $(
  [[ $have_torch -eq 1 ]] && echo yes || echo no)), sanitizer $(
  verdict $sanitizer_status "$([[ -n $SANITIZER ]] && echo clean || echo skipped)")"
[[ $check_status -eq 0 && $qualify_status -eq 0 && $timing_status -eq 0 && $sanitizer_status -eq 0 ]]
