# Sourced by the browser tests: sets `browser` to the first Chromium on PATH, or exits 77 (ctest's skip)
# saying none is installed.
browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" > /dev/null 2>&1; then browser=$candidate; break; fi
done
if [[ -z $browser ]]; then
  echo "SKIP: no chromium on PATH"
  exit 77
fi
