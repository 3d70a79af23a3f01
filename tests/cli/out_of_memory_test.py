#!/usr/bin/env python3
"""Out of memory is an error message and exit 3, never a silent abort (issue 38, red-team finding a):

* under an address-space limit (RLIMIT_AS, what `ulimit -v` and batch systems set) a run that needs more
  ends with exit 3 -- not a signal (mimalloc's operator new used to abort: exit 134, nothing printed) --
  and one message naming what it was doing (the system and iteration) and the limit in GiB, and leaves
  no report folder behind;
* a command without a finer activity (`plan`) says which command ran out, with the same limit.

The limit is the smallest one under which `zeppelin-bench --version` starts (found by bisection: shared
libraries take most of it, and differ between builds) plus half a GiB; ring CP over 400 GPUs needs
1.4 GB beyond that. Usage: out_of_memory_test.py BENCH SCENARIO WORK_DIR
"""
import os
import re
import resource
import shutil
import subprocess
import sys

MIB = 1 << 20


def run(command, limit):
    def lower_the_limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out = subprocess.run(command, capture_output=True, timeout=300, preexec_fn=lower_the_limit)
    return out.returncode, out.stdout.decode("utf-8", "replace"), out.stderr.decode("utf-8", "replace")


def startup_limit(bench):
    """The smallest address-space limit (to 16 MiB) under which the binary starts and prints its version."""
    low, high = 64 * MIB, 64 * 1024 * MIB
    if run([bench, "--version"], high)[0] != 0:
        sys.exit("zeppelin-bench --version fails even under a 64 GiB limit")
    while high - low > 16 * MIB:
        middle = (low + high) // 2
        if run([bench, "--version"], middle)[0] == 0:
            high = middle
        else:
            low = middle
    return high


def main():
    bench, scenario, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    limit = startup_limit(bench) + 512 * MIB
    gib = "%.1f GiB" % (limit / (1 << 30))
    failures = []

    out_dir = os.path.join(work, "report")
    rc, out, err = run([bench, "run", scenario, "--out", out_dir], limit)
    expected = ("error: out of memory while planning and running ring-cp (iteration 1 of 1); the scenario "
                "needs more than the %s this process may use" % gib)
    if rc != 3:
        failures.append("run under a %s limit exited %d (expected 3)\nstderr:\n%s" % (gib, rc, err))
    if expected not in err:
        failures.append("run's message is not\n  %s\nstderr:\n%s" % (expected, err))
    if len(err.strip().splitlines()) != 1:
        failures.append("run printed more than its one error line:\n" + err)
    if os.path.exists(out_dir):
        failures.append("run left a report folder behind: " + out_dir)

    rc, out, err = run([bench, "plan", scenario, "--system", "ring-cp"], limit)
    expected = "error: out of memory while running zeppelin-bench plan; the command needs more than the %s" % gib
    if rc != 3 or expected not in err:
        failures.append("plan under a %s limit exited %d (expected 3) without\n  %s\nstderr:\n%s" %
                        (gib, rc, expected, err))
    if not re.search(r"raise the limit \(ulimit -v", err):
        failures.append("plan's message does not say what to do:\n" + err)

    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        sys.exit(1)
    print("out of memory under a %s limit: exit 3 with the message, for run and plan" % gib)


if __name__ == "__main__":
    main()
