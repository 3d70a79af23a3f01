#!/usr/bin/env python3
"""The summary `run` prints fits where it is read (issue 37, item 2), as a specification:

* off a terminal (a pipe, a CI log) every line of the quickstart's summary is at most 100 columns, and
  it says which table columns it left out and that --wide shows them;
* COLUMNS=60 and a 60-column terminal (script(1), stty cols 60): every line at most 60 columns, save a
  line made long by one unbreakable word (a path after "wrote");
* --wide prints the full table: the speed-up against every baseline, TFLOP/s/GPU, on one line each;
* on a terminal the progress bar ends drawn full, with what ran and how long it took, on a line of its
  own, and TERM=dumb gets no escape sequence at all.

Columns are counted in code points ("×", "—", "Σ" are one column each), as a terminal shows them.
Usage: console_width_test.py BENCH SCENARIO WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys


def widest(text):
    return max((len(line) for line in text.splitlines()), default=0)


def too_wide(text, width):
    """Lines over `width` columns that are more than indent plus one unbreakable word (a path, a label)
    after what fits: "wrote /a/long/folder/report.json" may pass the width, a sentence may not."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if len(line) > width and len(line) - max(len(w) for w in words) > width // 2:
            out.append(line)
    return out


def run(command, env=None):
    merged = dict(os.environ, **(env or {}))
    if env is None or "COLUMNS" not in env:
        merged.pop("COLUMNS", None)
    out = subprocess.run(command, capture_output=True, timeout=600, env=merged)
    return out.returncode, out.stdout.decode("utf-8"), out.stderr.decode("utf-8")


def main():
    bench, scenario, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []
    base = [bench, "run", scenario, "--iterations", "2", "--out", os.path.join(work, "out")]

    rc, out, err = run(base)
    if rc != 0:
        failures.append("run exited %d: %s" % (rc, err))
    if widest(out) > 100:
        failures.append("off a terminal the summary is %d columns wide:\n%s" % (widest(out), out))
    if "not shown at 100 columns: " not in out or "--wide" not in out:
        failures.append("the summary does not say which columns it left out:\n" + out)

    rc, out, _ = run(base, {"COLUMNS": "60"})
    if too_wide(out, 60):
        failures.append("COLUMNS=60: lines wider than 60:\n" + "\n".join(too_wide(out, 60)))

    rc, wide, _ = run(base + ["--wide"])
    header = next((line for line in wide.splitlines() if line.startswith("system ")), "")
    for title in ("TFLOP/s/GPU", "tokens/s", "vs ring-cp", "NVLink util mean/max"):
        if title not in header:
            failures.append("--wide: no %r column in %r" % (title, header))
    if widest(wide) <= 100:
        failures.append("--wide printed no line over 100 columns: is it the full table?")

    script = shutil.which("script")
    if script:
        command = " ".join(base)
        rc, tty, _ = run([script, "-qec", "stty cols 60; " + command, "/dev/null"])
        # A terminal's output: the bar's redraws ("\r\033[K" ...) then its final full line, then the summary.
        shown = re.sub(r"[^\n]*\r", "", tty.replace("\r\n", "\n"))
        shown = re.sub(r"\x1b\[K", "", shown)
        if too_wide(shown, 60):
            failures.append("60-column terminal: lines wider than 60:\n" + "\n".join(too_wide(shown, 60)))
        if not re.search(r"\[#{24}\] \d+ systems? x \d+ iterations?, [0-9.]+ s\n", shown):
            failures.append("60-column terminal: the progress bar did not end full on its own line:\n" + shown)
        rc, dumb, _ = run([script, "-qec", "TERM=dumb " + command, "/dev/null"])
        if "\x1b" in dumb:
            failures.append("TERM=dumb got an escape sequence:\n%r" % dumb[:400])
    else:
        print("script(1) not found: the terminal cases are left out")

    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
