#!/usr/bin/env bash
# Layout test of an HTML report at a phone's width (390 px) and two desktop widths (1280, 1920 px), in
# headless Chromium: nothing may reach past the viewport outside a horizontal scroll container, nothing
# may be clipped without a scrollbar, no chart text may be cut off by its chart's edge (legend entries
# included) or render below 9 CSS px, and at desktop widths the Summary table shows every column.
# layout_harness.html does the measuring (it says how, and lists the findings); the report is checked as
# written, in a copy beside the harness, with no script added to it.
# Exits 0 when every width passes, 1 naming each finding, 77 (skipped) when no Chromium is installed.
# Usage: check_report_layout.sh REPORT.html OUTPUT_DIR
set -euo pipefail
report=$1
out_dir=$2
here=$(cd "$(dirname "$0")" && pwd)

source "$here/find_chromium.sh"

mkdir -p "$out_dir"
cp "$report" "$out_dir/report.html"
cp "$here/layout_harness.html" "$out_dir/layout_harness.html"
url="file://$(cd "$out_dir" && pwd)/layout_harness.html"
# A private profile folder: parallel test runs must not share Chromium's singleton lock.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --allow-file-access-from-files: the harness reads the frames' documents (file: pages are otherwise
# each their own origin). The virtual-time budget lets the load handler finish before the DOM is dumped.
timeout 180 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --allow-file-access-from-files --window-size=1920,1200 --virtual-time-budget=10000 \
  --dump-dom "$url" > "$out_dir/layout_dom.html" 2> "$out_dir/layout_chromium.log" || true

# The findings: the text of <pre id="results">, one per line, entities undone for reading.
sed -n '/<pre id="results">/,/<\/pre>/p' "$out_dir/layout_dom.html" |
  sed -e 's/.*<pre id="results">//' -e 's/<\/pre>.*//' \
      -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e "s/&#39;/'/g" -e 's/&amp;/\&/g' \
  > "$out_dir/layout_results.txt"
cat "$out_dir/layout_results.txt"

if ! grep -qx 'DONE' "$out_dir/layout_results.txt"; then
  echo "FAIL: the layout check did not finish (Chromium's log: $out_dir/layout_chromium.log)"
  exit 1
fi
for width in 390 1280 1920; do
  if ! grep -q "^OK $width:" "$out_dir/layout_results.txt"; then
    echo "FAIL: width $width was not measured"
    exit 1
  fi
done
if grep -q '^FAIL' "$out_dir/layout_results.txt"; then
  echo "FAIL: $(grep -c '^FAIL' "$out_dir/layout_results.txt") layout finding(s) in $report"
  exit 1
fi
echo "ok: $report lays out at 390, 1280 and 1920 px"
