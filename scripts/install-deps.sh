#!/usr/bin/env bash
# Installs the Debian packages zeppelin-bench needs to build and test. Idempotent: it installs only what
# is missing and says what it installs. When not root (and no sudo), it prints the apt-get line instead.
# With a CUDA toolkit present (nvcc on PATH or in /usr/local/cuda/bin) it also installs cudnn-frontend's
# C++ headers (PyPI nvidia-cudnn-frontend, pinned) into .deps/cudnn-frontend at the repo root, which
# cmake/Dependencies.cmake looks for; without CUDA that step is skipped and never fails the script.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CUDNN_FRONTEND_VERSION=1.32.0
CUDNN_FRONTEND_DIR="$ROOT/.deps/cudnn-frontend"
have_cuda=0
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then have_cuda=1; fi

# `--demo` (make demo): only what the simulator-only CLI needs, so a fresh machine runs the quickstart in
# minutes; the rest (MPI, the test tools, the browser, clang, cudnn-frontend) comes with `make test`.
demo=0
if [ "${1:-}" = "--demo" ]; then demo=1; fi

packages=(
  cmake ninja-build g++ make pkg-config git
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libsimgrid-dev
  coinor-libcbc-dev
  libmimalloc-dev
)
if [ "$demo" -eq 0 ]; then
  packages+=(
    libopenmpi-dev openmpi-bin
    libgtest-dev libgmock-dev libbenchmark-dev
    libbenchmark-tools python3-numpy python3-scipy
    chromium
    clang libclang-rt-dev clang-format
    zsh groff-base
  )
  # Debian's python3 has no pip module; the frontend install below needs one.
  if [ "$have_cuda" -eq 1 ] && ! python3 -m pip --version >/dev/null 2>&1; then packages+=(python3-pip); fi
else
  have_cuda=0  # the demo's build is simulator-only (ZEPPELIN_CUDA=OFF): no cudnn-frontend
fi

# The cudnn-frontend headers (header-only; --no-deps: the Python package's own dependencies are not
# needed for C++). --target keeps it out of the system site-packages (PEP 668 refuses those installs).
install_cudnn_frontend() {
  if [ "$have_cuda" -ne 1 ]; then
    echo "install-deps: no CUDA toolkit (or --demo), skipping cudnn-frontend"
    return 0
  fi
  local stamp="$CUDNN_FRONTEND_DIR/nvidia_cudnn_frontend-$CUDNN_FRONTEND_VERSION.dist-info"
  if [ -f "$CUDNN_FRONTEND_DIR/include/cudnn_frontend.h" ] && [ -d "$stamp" ]; then
    echo "install-deps: cudnn-frontend $CUDNN_FRONTEND_VERSION present in $CUDNN_FRONTEND_DIR"
    return 0
  fi
  echo "install-deps: installing cudnn-frontend $CUDNN_FRONTEND_VERSION headers into $CUDNN_FRONTEND_DIR"
  rm -rf "$CUDNN_FRONTEND_DIR"
  if ! python3 -m pip install --quiet --no-deps --target "$CUDNN_FRONTEND_DIR" \
      "nvidia-cudnn-frontend==$CUDNN_FRONTEND_VERSION"; then
    echo "install-deps: WARNING: pip could not install nvidia-cudnn-frontend==$CUDNN_FRONTEND_VERSION;" \
      "the build goes on without cuDNN SDPA (ZEPPELIN_HAVE_CUDNN=OFF)"
    return 0
  fi
  if [ ! -f "$CUDNN_FRONTEND_DIR/include/cudnn_frontend.h" ]; then
    echo "install-deps: WARNING: the wheel has no include/cudnn_frontend.h; cuDNN SDPA stays off"
  fi
  # Only the C++ headers (3 MB) are used; the wheel's Python module (about 90 MB, not importable from
  # --target anyway) would only weigh on copies of the tree to a GPU machine.
  rm -rf "$CUDNN_FRONTEND_DIR/cudnn"
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  install_cudnn_frontend
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$(id -u)" -eq 0 ]; then
  sudo_cmd=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo_cmd=(sudo)
else
  echo "install-deps: not root; run this, then try again:"
  echo "  sudo apt-get update && sudo ${cmd[*]}"
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" "${cmd[@]}"
install_cudnn_frontend
echo "install-deps: done"
