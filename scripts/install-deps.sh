#!/usr/bin/env bash
# Installs the Debian packages zeppelin-bench needs to build and test. Idempotent: it installs only what
# is missing and says what it installs. When not root (and no sudo), it prints the apt-get line instead.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config git
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsimgrid-dev
  libopenmpi-dev openmpi-bin
  chromium
  clang libclang-rt-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
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
echo "install-deps: done"
