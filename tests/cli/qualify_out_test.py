#!/usr/bin/env python3
"""qualify's --out (issue 38, red-team finding e), as a specification:

* an --out that cannot take qualify.json and qualify.html (a file on its path) is refused before any
  measuring: exit 3, as run and calibrate refuse theirs, one message naming --out and the file in the way,
  no probe's progress line and nothing on stdout;
* when writing fails after the measuring (here qualify.json is a folder, which the check cannot foresee),
  the verdict is printed all the same before the error, exit 3;
* a fresh nested --out is created and receives both files, exit 0 (1 if a figure is below its floor).

Usage: qualify_out_test.py BENCH SCENARIO WORK_DIR
"""
import os
import shutil
import subprocess
import sys


def qualify(bench, scenario, out):
    done = subprocess.run([bench, "qualify", scenario, "--out", out], capture_output=True, timeout=600)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def main():
    bench, scenario, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []

    in_the_way = os.path.join(work, "a-file")
    with open(in_the_way, "w") as f:
        f.write("not a folder\n")
    rc, out, err = qualify(bench, scenario, os.path.join(in_the_way, "qualify"))
    expected = ("error: --out: %s/qualify cannot take qualify.json and qualify.html: %s is a file, not a folder"
                % (in_the_way, in_the_way))
    if rc != 3 or expected not in err:
        failures.append("a file on --out's path: exit %d (expected 3) without\n  %s\nstderr:\n%s" % (rc, expected, err))
    if "compute probes" in err or out:
        failures.append("a file on --out's path was found after measuring:\nstdout:\n%s\nstderr:\n%s" % (out, err))
    rc, out, err = qualify(bench, scenario, in_the_way)
    if rc != 3 or "a-file cannot take qualify.json and qualify.html: it is a file, not a folder" not in err:
        failures.append("--out naming a file: exit %d (expected 3)\nstderr:\n%s" % (rc, err))

    blocked = os.path.join(work, "blocked")
    os.makedirs(os.path.join(blocked, "qualify.json"))
    rc, out, err = qualify(bench, scenario, blocked)
    verdict = [line for line in out.splitlines() if line.startswith(("qualified: ", "NOT QUALIFIED: "))]
    if rc != 3 or len(verdict) != 1 or "qualify.json" not in err:
        failures.append("a write that fails after measuring: exit %d (expected 3), verdict lines %s\n"
                        "stdout:\n%s\nstderr:\n%s" % (rc, verdict, out, err))

    fresh = os.path.join(work, "fresh", "nested", "qualify")
    rc, out, err = qualify(bench, scenario, fresh)
    written = [name for name in ("qualify.json", "qualify.html") if os.path.isfile(os.path.join(fresh, name))]
    if rc not in (0, 1) or len(written) != 2 or ("wrote %s/qualify.json" % fresh) not in out:
        failures.append("a fresh nested --out: exit %d, files %s\nstdout:\n%s\nstderr:\n%s" % (rc, written, out, err))

    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        sys.exit(1)
    print("qualify --out: checked before measuring, the verdict printed whatever the write does")


if __name__ == "__main__":
    main()
