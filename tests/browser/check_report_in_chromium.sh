#!/usr/bin/env bash
# Browser test of the HTML report: renders it in headless Chromium, checks the DOM (charts present, the
# hostile scenario name escaped, no script element), checks the console log for script errors, and writes
# a screenshot. Exits 77 (skipped) when no Chromium is installed.
# Usage: check_report_in_chromium.sh RENDERER OUTPUT_DIR
set -euo pipefail
renderer=$1
out_dir=$2

source "$(cd "$(dirname "$0")" && pwd)/find_chromium.sh"

mkdir -p "$out_dir"
html="$out_dir/browser_report.html"
"$renderer" "$html" '<script>alert(1)</script>'
url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0)
# A private profile folder: parallel test runs must not share Chromium's singleton lock.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile" --dump-dom "$url" > "$out_dir/browser_dom.html" 2> "$out_dir/browser_dom.log"
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile" --window-size=1400,2400 \
  --screenshot="$out_dir/browser_report.png" "$url" > /dev/null 2> "$out_dir/browser_screenshot.log"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

dom="$out_dir/browser_dom.html"
svg_count=$(grep -o '<svg ' "$dom" | wc -l)
[[ $svg_count -ge 8 ]] || fail "expected at least 8 inline SVG charts in the rendered DOM, found $svg_count"
for chart in "Iteration time breakdown" "Compute time per GPU" "NIC utilisation over time" \
             "Histogram of document lengths" "Timeline of the first ranks"; do
  grep -q "$chart" "$dom" || fail "chart missing from the DOM: $chart"
done
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$dom" || fail "the scenario name does not appear escaped"
if grep -qi '<script' "$dom"; then fail "the DOM contains a <script> element"; fi
if grep -E 'CONSOLE|Uncaught|SyntaxError' "$out_dir/browser_dom.log" "$out_dir/browser_screenshot.log" | grep -qvi 'dbus'; then
  fail "the page logged console messages or script errors:"
  grep -E 'CONSOLE|Uncaught|SyntaxError' "$out_dir/browser_dom.log" "$out_dir/browser_screenshot.log" || true
fi
[[ -s "$out_dir/browser_report.png" ]] || fail "no screenshot was written"

if [[ $failures -gt 0 ]]; then exit 1; fi
echo "ok: $svg_count charts, name escaped, no script errors; screenshot $out_dir/browser_report.png"
