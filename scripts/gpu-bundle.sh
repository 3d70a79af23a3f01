#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs on a bare GPU machine into one compressed file that travels with
# the working tree: the GPU machine has CMake, Ninja, nvcc and NVIDIA's libraries, but none of the Debian
# packages the CLI links (SimGrid, fmt, CBC...), and what may travel is at most 64 MiB.
#
#   scripts/gpu-bundle.sh [--no-build] [BUILD_DIR]   # default: build/ (the main build; CUDA must be on)
#   --no-build   pack the binaries as they are (e.g. while someone else's edits are half-way)
#   ZB_GPUCHECK_BIN=path   another zb_gpucheck (e.g. the standalone build of kernels/gpucheck)
#   ZB_BENCH_BIN=path      another zeppelin-bench
#
# It builds the targets zeppelin-bench and zb_gpucheck in BUILD_DIR, then writes .deps/gpu-carry/:
#   zb-gpu.tar.xz   bin/zeppelin-bench, bin/zb_gpucheck (stripped); lib/ every shared library they
#                   need except the C/C++ runtime (the GPU machine's is as new or newer) and NVIDIA's
#                   (CUDA runtime, cuBLAS, cuDNN, NCCL, CUPTI, NVRTC come from the GPU machine: far too
#                   large to carry); include/ cudnn-frontend's headers, for the fallback build there
#   MANIFEST.txt    commit, build type, nvcc, sizes and the tarball's sha256
# Name .deps/gpu-carry in the device call's `carry`; scripts/gpu-check.sh unpacks it. Exit 2 when the build
# has no CUDA or cudnn-frontend is missing, 1 when the carried file exceeds its share of the 64 MiB.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_FIRST=1
if [[ "${1:-}" == "--no-build" ]]; then BUILD_FIRST=0; shift; fi
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
GPUCHECK_BIN="${ZB_GPUCHECK_BIN:-$BUILD/kernels/zb_gpucheck}"
BENCH_BIN="${ZB_BENCH_BIN:-$BUILD/cli/zeppelin-bench}"
CARRY="$ROOT/.deps/gpu-carry"
FRONTEND="$ROOT/.deps/cudnn-frontend/include"
# The tarball's share of the 64 MiB that may travel: the working tree (about 5 MiB) needs the rest.
LIMIT_BYTES=$((48 * 1024 * 1024))

NVCC_VERSION="$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")/\1/p' "$BUILD"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null | head -n 1)"
if [[ -z "$NVCC_VERSION" ]]; then
  echo "gpu-bundle: $BUILD is not a configured build with CUDA (run make build on a machine with the toolkit)" >&2
  exit 2
fi
if [[ ! -f "$FRONTEND/cudnn_frontend.h" ]]; then
  echo "gpu-bundle: $FRONTEND/cudnn_frontend.h missing: run scripts/install-deps.sh" >&2
  exit 2
fi

if [[ $BUILD_FIRST -eq 1 ]]; then cmake --build "$BUILD" -j 2 --target zeppelin-bench zb_gpucheck; fi
STAGE="$(mktemp -d)/zb-gpu"
trap 'rm -rf "$(dirname "$STAGE")"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib"
strip -o "$STAGE/bin/zeppelin-bench" "$BENCH_BIN"
strip -o "$STAGE/bin/zb_gpucheck" "$GPUCHECK_BIN"
cp -r "$FRONTEND" "$STAGE/include"

runtime='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libstdc\+\+|libgcc_s)\.'
nvidia='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn.*|libnccl|libcupti|libnvrtc.*|libnvToolsExt|libnvJitLink)\.'
for binary in "$BENCH_BIN" "$GPUCHECK_BIN"; do
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if [[ "$name" =~ $runtime || "$name" =~ $nvidia || -e "$STAGE/lib/$name" ]]; then continue; fi
    cp -L "$path" "$STAGE/lib/$name"
  done
done
strip --strip-unneeded "$STAGE"/lib/*

mkdir -p "$CARRY"
rm -f "$CARRY/zb-gpu.tar.xz"
tar -C "$(dirname "$STAGE")" -cf - zb-gpu | xz -T2 -6 >"$CARRY/zb-gpu.tar.xz"
size=$(stat -c %s "$CARRY/zb-gpu.tar.xz")
{
  echo "commit     $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . ':!.deps' || echo ' (dirty)')"
  echo "date       $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "build      $BUILD ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt"))"
  echo "nvcc       $NVCC_VERSION"
  echo "unpacked   $(du -sb "$STAGE" | cut -f1) bytes"
  echo "tarball    $size bytes"
  echo "sha256     $(sha256sum "$CARRY/zb-gpu.tar.xz" | cut -d' ' -f1)"
  echo "libraries  $(ls "$STAGE/lib" | tr '\n' ' ')"
} >"$CARRY/MANIFEST.txt"
cat "$CARRY/MANIFEST.txt"
if [[ $size -gt $LIMIT_BYTES ]]; then
  echo "gpu-bundle: $CARRY/zb-gpu.tar.xz is $size bytes, over its $LIMIT_BYTES-byte share of what may travel" >&2
  exit 1
fi
