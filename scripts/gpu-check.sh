#!/usr/bin/env bash
# The one GPU run: on a bare H100/H200 machine (nvcc, CMake, Ninja, NVIDIA's libraries, python3 with or
# without PyTorch; none of the project's Debian packages), within the device lease's limits: at most
# 9 minutes of commands, at most 8 result files, at most 64 MiB carried. Steps, each under its own cap
# and one shared budget (a step that would start with under 10 s left is skipped and said so):
#   image        GPU, driver, CUDA runtime, cuDNN, cuBLASLt (asked at run time), NVIDIA libraries found
#   check        every kernel case against the float64 CPU oracle, per-element tolerances (cuDNN SDPA
#                forward and backward included: a cuDNN that cannot run is a failure, not a skip)
#   variants     the cuDNN backward cases whose entries do not tile Q, under each way of building the
#                graphs (packed or dense accumulators, one call per mask kind or per entry), GQA and MHA
#   gemm         cuBLASLt bf16 8192³ on random data (median of timed runs)
#   cudnn        cuDNN SDPA causal bf16 forward and backward, 32 heads, d 128, 8K..64K tokens
#   layouts      cuDNN causal forward and backward of one 8K and 32K sequence under graphs that differ in one
#                layout property at a time (torch's BHSD, BSHD rows, THD ragged, padding mask, diagonal
#                alignment, max_total accumulators) and every engine for torch's layout: why the project's
#                backward graph ran at half of torch's (zb_gpucheck time-bwd-layouts)
#   interference GEMM 8192³ (and cuDNN SDPA forward, 16K tokens) alone and beside a comm-like copy kernel
#                (8/16/32 CTAs) and a 1-rank NCCL send/recv on another stream: comm_compute_slowdown;
#                small-message latency (NCCL loaded at run time; without it, the copy kernel's figures);
#                comm first: the copy kernel already resident on its SMs when the GEMM/SDPA is launched
#   own          the project's own causal forward kernel, same shapes
#   verify       zeppelin-bench run --backend cuda of scenarios/one-h200-verify.json, correctness pass on
#                (every attention instruction against the float64 oracle)
#   run          zeppelin-bench run --backend cuda of scenarios/one-h200.json (timed)
#   qualify      zeppelin-bench qualify --backend cuda (GEMM and attention against the preset's peak)
#   torch        PyTorch SDPA forward and backward, same shapes, and the comparison table (if torch imports)
#   sanitizer    compute-sanitizer memcheck over one small case of each kernel
#   calibrate    zeppelin-bench calibrate --backend cuda (the hardware profile fitted on one GPU)
# SM clock, memory clock, power and temperature are sampled every 250 ms through the timed steps.
#
# What it needs: .deps/gpu-carry/zb-gpu.tar.xz (scripts/gpu-bundle.sh: the prebuilt CLI and driver, the
# libraries they need beyond the C/C++ runtime and NVIDIA's, cudnn-frontend's headers). When the prebuilt
# driver does not load there, it builds kernels/gpucheck from source (cap 240 s of the budget).
# Results ($OUT when set, else out/gpu-check): summary.txt, summary.json, logs.tar.gz, report.json
# (the cuda run's), qualify.json: five files.
#
#   scripts/gpu-check.sh                  # the run (on the GPU machine)
#   scripts/gpu-check.sh --dry-run        # here: the plan, the carried size and file count checked, and
#                                         # the bundle unpacked and asked for a device (exit 0 when it
#                                         # reaches "no usable CUDA device" cleanly, or finds one)
#   ZB_GPUCHECK_BUDGET=420 scripts/gpu-check.sh   # a shorter budget (seconds, default 510)
#   ZB_GPUCHECK_STEPS="check variants" ...        # only those steps (image and prepare always run)
#   ZB_GPUCHECK_SCENARIO=file ...                  # time another one-GPU scenario (run, qualify, calibrate)
# Exit status: 0 every step passed; 1 a step failed or was skipped; 2 a tool or the bundle is missing or
# the limits are exceeded.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="$ROOT/.deps/gpu-carry"
BUDGET="${ZB_GPUCHECK_BUDGET:-510}"
DRY_RUN=0
[[ "${1:-}" == "--dry-run" ]] && DRY_RUN=1
RESULTS="${OUT:-$ROOT/out/gpu-check}"
SCENARIO="${ZB_GPUCHECK_SCENARIO:-$ROOT/scenarios/one-h200.json}"
VERIFY_SCENARIO="$ROOT/scenarios/one-h200-verify.json"
WORK="$(mktemp -d /tmp/zb-gpu-check.XXXXXX)"
LOGS="$WORK/logs"
mkdir -p "$LOGS" "$RESULTS"
STARTED=$SECONDS
LENGTHS=(8192 16384 32768 65536)
HEADS=32
HEAD_DIM=128
MAX_CARRY_BYTES=$((64 * 1024 * 1024))
RESULT_FILES=(summary.txt summary.json logs.tar.gz report.json qualify.json)
MAX_RESULT_FILES=8
# name:cap seconds, in running order; the dry run prints this plan.
STEPS=(image:20 prepare:60 check:150 variants:60 gemm:40 cudnn:90 layouts:150 interference:60 own:60 verify:90 run:120 qualify:120 torch:100
  sanitizer:90 calibrate:120)
# ZB_GPUCHECK_STEPS="check variants run": only those (image and prepare always run), e.g. a short second
# call that looks again at what the first one found.
if [[ -n "${ZB_GPUCHECK_STEPS:-}" ]]; then
  selected=()
  for s in "${STEPS[@]}"; do
    n="${s%%:*}"
    if [[ $n == image || $n == prepare || " $ZB_GPUCHECK_STEPS " == *" $n "* ]]; then selected+=("$s"); fi
  done
  STEPS=("${selected[@]}")
fi
wanted() { [[ " ${STEPS[*]} " == *" $1:"* ]]; }

say() { echo "[gpu-check +$((SECONDS - STARTED))s] $*"; }
declare -A VERDICT
declare -A NOTE

# step NAME CAP LOG command...: runs under the smaller of CAP and what is left of the budget, teeing to
# LOG; records PASS/FAIL/TIMEOUT/SKIPPED for NAME. Returns the command's status (125 when skipped).
step() {
  local name="$1" cap="$2" log="$3"
  shift 3
  local left=$((BUDGET - (SECONDS - STARTED)))
  local seconds=$((cap < left ? cap : left))
  if [[ $seconds -lt 10 ]]; then
    say "SKIPPED $name (time budget spent)"
    VERDICT[$name]=SKIPPED
    return 125
  fi
  say "$name (cap ${seconds}s): $*"
  timeout --kill-after=5 "$seconds" "$@" >"$LOGS/$log" 2>&1
  local status=$?
  tail -n 40 "$LOGS/$log"
  if [[ $status -eq 0 ]]; then
    VERDICT[$name]=PASS
  elif [[ $status -eq 124 || $status -eq 137 ]]; then
    VERDICT[$name]="TIMEOUT (${seconds}s)"
  else
    VERDICT[$name]="FAIL (exit $status)"
  fi
  say "$name: ${VERDICT[$name]}"
  return $status
}

# Every folder that may hold NVIDIA's libraries on such a machine: the toolkit's, CUPTI's, pip's wheels
# (nvidia/*/lib, and nvidia/cu13/lib for the CUDA 13 wheels), and wherever libcudnn/libnccl lie.
nvidia_library_path() {
  local dirs=() cuda_root
  cuda_root="$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")"
  for d in "$cuda_root/lib64" "$cuda_root/lib" "$cuda_root/extras/CUPTI/lib64" \
    "$cuda_root/targets/x86_64-linux/lib" /usr/local/cuda/lib64 /usr/local/nvidia/lib64; do
    [[ -d "$d" ]] && dirs+=("$d")
  done
  if command -v python3 >/dev/null 2>&1; then
    while read -r d; do [[ -n "$d" ]] && dirs+=("$d"); done < <(python3 - 2>/dev/null <<'EOF'
import glob, site, sysconfig
roots = set(site.getsitepackages() + [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
for root in sorted(roots):
    for pattern in ("/nvidia/*/lib", "/nvidia/cu13/lib", "/nvidia/*/lib64"):
        for d in sorted(glob.glob(root + pattern)):
            print(d)
EOF
    )
  fi
  while read -r f; do dirs+=("$(dirname "$f")"); done < <(timeout 20 find /usr /opt -maxdepth 9 \
    \( -name 'libcudnn.so.9' -o -name 'libnccl.so.2' -o -name 'libcupti.so.13' -o -name 'libnvrtc.so.13' \) \
    2>/dev/null | sort -u)
  local joined="" seen=" "
  for d in "${dirs[@]}"; do
    [[ "$seen" == *" $d "* ]] && continue
    seen+="$d "
    joined+="${joined:+:}$d"
  done
  echo "$joined"
}

# ------------------------------------------------------------------------------------------------ plan
total_cap=0
for s in "${STEPS[@]}"; do total_cap=$((total_cap + ${s#*:})); done
tree_bytes=$(cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null |
  awk '{s += $1} END {print s + 0}')
carry_bytes=$(du -sb "$CARRY" 2>/dev/null | cut -f1)
carry_bytes=${carry_bytes:-0}
say "plan: budget ${BUDGET}s (steps' caps sum to ${total_cap}s; later steps are skipped when it runs out)"
for s in "${STEPS[@]}"; do printf '  %-12s cap %4ss\n' "${s%%:*}" "${s#*:}"; done
say "travels: working tree $tree_bytes bytes + .deps/gpu-carry $carry_bytes bytes = $((tree_bytes + carry_bytes)) of $MAX_CARRY_BYTES"
say "results: ${#RESULT_FILES[@]} files of at most $MAX_RESULT_FILES (${RESULT_FILES[*]}) in $RESULTS"
limits_ok=1
if [[ $BUDGET -gt 540 ]]; then say "FAIL: budget ${BUDGET}s is over the 9 minutes a command may take"; limits_ok=0; fi
if [[ $((tree_bytes + carry_bytes)) -gt $MAX_CARRY_BYTES ]]; then say "FAIL: what travels is over 64 MiB"; limits_ok=0; fi
if [[ ${#RESULT_FILES[@]} -gt $MAX_RESULT_FILES ]]; then say "FAIL: more result files than come back"; limits_ok=0; fi
if [[ ! -f "$CARRY/zb-gpu.tar.xz" ]]; then
  say "FAIL: $CARRY/zb-gpu.tar.xz missing: run scripts/gpu-bundle.sh here and carry .deps/gpu-carry"
  exit 2
fi
[[ $limits_ok -eq 1 ]] || exit 2
[[ -f "$CARRY/MANIFEST.txt" ]] && sed 's/^/  bundle: /' "$CARRY/MANIFEST.txt" | grep -v libraries

# ------------------------------------------------------------------------------------------------ image
mkdir -p "$WORK/bundle"
if ! tar -C "$WORK/bundle" -xJf "$CARRY/zb-gpu.tar.xz"; then say "FAIL: cannot unpack the bundle"; exit 2; fi
BUNDLE="$WORK/bundle/zb-gpu"
NVLIBS="$(nvidia_library_path)"
export LD_LIBRARY_PATH="$BUNDLE/lib${NVLIBS:+:$NVLIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPUCHECK="$BUNDLE/bin/zb_gpucheck"
BENCH="$BUNDLE/bin/zeppelin-bench"
{
  echo "date        $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit      $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "host        $(uname -srm), $(nproc) CPUs"
  echo "nvcc        $(nvcc --version 2>/dev/null | tail -n 2 | head -n 1 || echo 'not found')"
  echo "cmake       $(cmake --version 2>/dev/null | head -n 1 || echo 'not found')"
  echo "libraries   LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  for binary in "$GPUCHECK" "$BENCH"; do
    echo "ldd $(basename "$binary"):"
    ldd "$binary" 2>&1 | grep -E 'cuda|cublas|cudnn|nccl|cupti|nvrtc|not found' | sed 's/^/  /'
  done
  echo "sanitizer   $(compute-sanitizer --version 2>/dev/null | tail -n 1 || echo 'not on PATH')"
  echo "python3     $(python3 --version 2>&1)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,pstate --format=csv
  else
    echo "nvidia-smi  not found"
  fi
} >"$LOGS/image.txt" 2>&1
cat "$LOGS/image.txt"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -q >"$LOGS/nvidia-smi-q.txt" 2>&1

if [[ $DRY_RUN -eq 1 ]]; then
  "$GPUCHECK" versions >"$LOGS/versions.log" 2>&1
  status=$?
  cat "$LOGS/versions.log"
  missing="$(ldd "$GPUCHECK" "$BENCH" 2>&1 | grep 'not found' | sort -u)"
  [[ -n "$missing" ]] && say "libraries this host lacks (the GPU machine must have them): $(echo "$missing" | awk '{print $1}' | tr '\n' ' ')"
  if grep -qi "no usable CUDA device\|no CUDA device\|no device" "$LOGS/versions.log"; then
    say "dry run: reached 'no usable CUDA device' cleanly; the plan above is within the limits"
    rm -rf "$WORK"
    exit 0
  fi
  if [[ $status -eq 0 ]]; then
    say "dry run: a device answered; the plan above is within the limits"
    rm -rf "$WORK"
    exit 0
  fi
  say "dry run: FAIL: the driver neither found a device nor said it has none (exit $status)"
  rm -rf "$WORK"
  exit 1
fi

# From here on, the results are packed whatever happens.
finish() {
  [[ -n "${SAMPLER:-}" ]] && kill "$SAMPLER" 2>/dev/null
  local overall=0
  for s in "${STEPS[@]}"; do
    local n="${s%%:*}"
    [[ "${VERDICT[$n]:-not run}" == PASS ]] || overall=1
  done
  # The CLI's reports join the logs first: the summary reads them there.
  cp -r "$WORK/verify" "$WORK/run" "$WORK/qualify" "$WORK/calibrate" "$LOGS/" 2>/dev/null
  if command -v python3 >/dev/null 2>&1; then
    python3 "$ROOT/scripts/gpu-summary.py" --logs "$LOGS" --steps "${STEPS[*]}" \
      --verdicts "$(for s in "${STEPS[@]}"; do n="${s%%:*}"; printf '%s=%s;' "$n" "${VERDICT[$n]:-not run}"; done)" \
      --notes "$(for n in "${!NOTE[@]}"; do printf '%s=%s;' "$n" "${NOTE[$n]}"; done)" \
      --json "$RESULTS/summary.json" --text "$RESULTS/summary.txt" >"$LOGS/summary.log" 2>&1 ||
      say "summary: gpu-summary.py failed (see logs/summary.log)"
  fi
  if [[ ! -s "$RESULTS/summary.txt" ]]; then
    for s in "${STEPS[@]}"; do n="${s%%:*}"; echo "$n: ${VERDICT[$n]:-not run}"; done >"$RESULTS/summary.txt"
  fi
  [[ -f "$WORK/run/report.json" ]] && cp "$WORK/run/report.json" "$RESULTS/report.json"
  [[ -f "$WORK/qualify/qualify.json" ]] && cp "$WORK/qualify/qualify.json" "$RESULTS/qualify.json"
  tar -C "$WORK" -czf "$RESULTS/logs.tar.gz" logs
  echo
  cat "$RESULTS/summary.txt"
  say "results in $RESULTS: $(ls "$RESULTS" | tr '\n' ' ')"
  exit $overall
}
trap finish EXIT

VERDICT[image]=PASS
"$GPUCHECK" versions >"$LOGS/versions.log" 2>&1 || VERDICT[image]="FAIL (versions)"
cat "$LOGS/versions.log"
if grep -qi "no usable CUDA device\|no device" "$LOGS/versions.log"; then
  say "FAIL: no usable CUDA device on this machine; nothing to check"
  exit 1
fi

# -------------------------------------------------------------------------------------------- prepare
# The prebuilt driver when every library it needs resolves here; otherwise build kernels/gpucheck.
if ldd "$GPUCHECK" | grep -q 'not found'; then
  NOTE[prepare]="prebuilt zb_gpucheck does not load ($(ldd "$GPUCHECK" | grep 'not found' | awk '{print $1}' | tr '\n' ' ')): built here"
  say "${NOTE[prepare]}"
  step prepare 240 build.log bash -c "cmake -S '$ROOT/kernels/gpucheck' -B '$WORK/build' -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DZEPPELIN_CUDNN_FRONTEND_DIR='$BUNDLE' && cmake --build '$WORK/build' -j \$(nproc)" &&
    GPUCHECK="$WORK/build/zb_gpucheck"
else
  NOTE[prepare]="prebuilt zb_gpucheck and zeppelin-bench loaded"
  VERDICT[prepare]=PASS
fi
bench_missing="$(ldd "$BENCH" | grep 'not found' | awk '{print $1}' | tr '\n' ' ')"
[[ -n "$bench_missing" ]] && NOTE[bench]="zeppelin-bench lacks: $bench_missing"

# Clocks, power and temperature through the timed steps.
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv,noheader,nounits -lms 250 >"$LOGS/clocks.csv" 2>/dev/null &
  SAMPLER=$!
fi

wanted check && step check 150 check.log "$GPUCHECK" check 20261204
wanted variants && step variants 60 variants.log "$GPUCHECK" bwd-variants 20261204
wanted gemm && step gemm 40 gemm.log "$GPUCHECK" time-gemm 8192 8192 8192
wanted cudnn && step cudnn 90 cudnn.log "$GPUCHECK" time-cudnn "$HEADS" "$HEAD_DIM" "${LENGTHS[@]}"
wanted layouts && step layouts 150 layouts.log "$GPUCHECK" time-bwd-layouts "$HEADS" "$HEAD_DIM" 8192 32768
if ! wanted interference; then
  :
elif [[ "$("$GPUCHECK" 2>&1)" == *interference* ]]; then
  step interference 60 interference.log "$GPUCHECK" interference
else
  # A bundle packed before the subcommand existed: say so plainly instead of a usage error.
  VERDICT[interference]="FAIL (this zb_gpucheck has no interference subcommand: rebuild the bundle)"
  say "interference: ${VERDICT[interference]}"
fi
wanted own && step own 60 own.log "$GPUCHECK" time "$HEADS" "$HEAD_DIM" "${LENGTHS[@]}"
if [[ -n "${NOTE[bench]:-}" ]]; then
  for n in verify run qualify calibrate; do VERDICT[$n]="FAIL (${NOTE[bench]})"; done
  say "verify, run, qualify, calibrate not run: ${NOTE[bench]}"
else
  wanted verify && ZB_CUDA_VERIFY=on step verify 90 verify.log "$BENCH" run "$VERIFY_SCENARIO" --backend cuda \
    --verbose --out "$WORK/verify"
  wanted run && step run 120 run.log "$BENCH" run "$SCENARIO" --backend cuda --verbose --out "$WORK/run"
  wanted qualify && step qualify 120 qualify.log "$BENCH" qualify "$SCENARIO" --backend cuda --out "$WORK/qualify"
fi
grep -q -- '--json' "$ROOT/kernels/gpucheck/bench_sdpa.py" || NO_JSON=1
torch_args=(--lengths "${LENGTHS[@]}" --heads "$HEADS" --head-dim "$HEAD_DIM" --ours "$LOGS/own.log"
  --cudnn "$LOGS/cudnn.log" --markdown "$LOGS/table.md")
[[ -z "${NO_JSON:-}" ]] && torch_args+=(--json "$LOGS/table.json")
if ! wanted torch; then
  :
elif command -v python3 >/dev/null 2>&1 && timeout 60 python3 -c "import torch; assert torch.cuda.is_available(); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version(), 'nccl', torch.cuda.nccl.version())" >"$LOGS/torch-import.log" 2>&1; then
  cat "$LOGS/torch-import.log"
  step torch 100 torch.log python3 "$ROOT/kernels/gpucheck/bench_sdpa.py" "${torch_args[@]}"
else
  NOTE[torch]="torch not importable or sees no GPU: table without the torch columns"
  cat "$LOGS/torch-import.log"
  step torch 60 torch.log python3 "$ROOT/kernels/gpucheck/bench_sdpa.py" "${torch_args[@]}" --no-torch
fi
SANITIZER="$(command -v compute-sanitizer || true)"
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [[ -z "$SANITIZER" && -x "$candidate" ]] && SANITIZER="$candidate"
done
if ! wanted sanitizer; then
  :
elif [[ -n "$SANITIZER" ]]; then
  step sanitizer 90 sanitizer.log "$SANITIZER" --tool memcheck --error-exitcode 3 "$GPUCHECK" sanitize
else
  VERDICT[sanitizer]="FAIL (compute-sanitizer not found)"
fi
if [[ -z "${NOTE[bench]:-}" ]] && wanted calibrate; then
  mkdir -p "$WORK/calibrate"
  step calibrate 120 calibrate.log "$BENCH" calibrate "$SCENARIO" --backend cuda \
    --out "$WORK/calibrate/profile.json"
fi
