#!/usr/bin/env bash
# Builds zeppelin-bench for a bare GPU machine and bundles it, for scripts/gpu-check.sh's qualify step:
# the full CLI needs Debian packages (SimGrid, fmt, CLI11) that such a machine lacks and cannot fetch.
# Run it where they are (this project's development machine, with the CUDA toolkit); it writes
#   .deps/gpu-bundle/bin/zeppelin-bench   (Release, CUDA and NCCL on, MPI off: one process, no libmpi)
#   .deps/gpu-bundle/lib/                 the shared libraries it needs beyond the C/C++ runtime and
#                                         NVIDIA's (CUDA, cuBLAS, cuDNN, NCCL, CUPTI come from the GPU
#                                         machine's toolkit or pip packages: too large to carry)
# Carry .deps/ to the GPU machine; gpu-check.sh puts the bundle's lib/ first on the library path.
#   scripts/gpu-bundle.sh                 # builds in build-gpu-bundle/ at the repo root
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ZB_GPU_BUNDLE_BUILD:-$ROOT/build-gpu-bundle}"
BUNDLE="$ROOT/.deps/gpu-bundle"

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZEPPELIN_CUDA=ON -DZEPPELIN_MPI=OFF \
  -DZEPPELIN_BUILD_TESTS=OFF -DZEPPELIN_BUILD_BENCHMARKS=OFF >"$BUILD.configure.log" 2>&1 ||
  { echo "gpu-bundle: configure failed, see $BUILD.configure.log" >&2; exit 1; }
cmake --build "$BUILD" -j "$(nproc)" --target zeppelin-bench
rm -rf "$BUNDLE" && mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
strip -o "$BUNDLE/bin/zeppelin-bench" "$BUILD/cli/zeppelin-bench"
# Every resolved library except the C/C++ runtime (the GPU machine's is as new or newer) and NVIDIA's.
runtime='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.'
nvidia='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn.*|libnccl|libcupti|libnvrtc.*|libnvToolsExt|libnvJitLink)\.'
ldd "$BUILD/cli/zeppelin-bench" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
  if [[ "$name" =~ $runtime || "$name" =~ $nvidia ]]; then continue; fi
  cp -L "$path" "$BUNDLE/lib/$name"
done
echo "gpu-bundle: $(du -sh "$BUNDLE" | cut -f1) in $BUNDLE:"
ls -1 "$BUNDLE/bin" "$BUNDLE/lib"
