#!/usr/bin/env python3
"""Google Benchmark's own tools/compare.py on two `--format gbench` files (issue 37, item 4).

- Two runs of 10 iterations (seeds 1 and 2): compare.py runs its Mann-Whitney U test on every system and
  prints a `<name>_pvalue` row with "U Test, Repetitions: 10 vs 10" (10 >= its 9 recommended, so no
  "unreliable" warning), besides the per-iteration and the _mean/_median rows.
- A system out of memory in some iterations (packing-dp on documents longer than a GPU holds,
  tests/cli/data/gbench_out_of_memory.json) and systems out of memory in every iteration (the same with
  llama-30b): each of their entries is an error entry with NaN times, and compare.py prints no normal
  row for them against a run in which they fitted (llama-3b), in either direction, nor against
  themselves: every row of theirs reads nan (never -1.0000 or +0.0000), their U test reads nan, and they
  have no _mean/_median rows.

compare.py is Debian's (package libbenchmark-tools: /usr/share/benchmark/compare.py) or the file named
by ZB_GBENCH_COMPARE; it needs numpy and scipy (python3-numpy, python3-scipy), so it runs with the first
Python that has them. Exit 77 (skipped) only when compare.py is absent.

Usage: gbench_compare_test.py ZEPPELIN_BENCH QUICKSTART OOM_SCENARIO WORK_DIR
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

SKIP = 77


def find_compare():
    for candidate in (os.environ.get("ZB_GBENCH_COMPARE"), "/usr/share/benchmark/compare.py"):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def find_python():
    for candidate in ("/usr/bin/python3", sys.executable, shutil.which("python3")):
        if not candidate or not os.path.exists(candidate):
            continue
        probe = subprocess.run([candidate, "-c", "import numpy, scipy.stats"], capture_output=True)
        if probe.returncode == 0:
            return candidate
    return None


def run(binary, scenario, out, *extra):
    made = subprocess.run([binary, "run", scenario, "--format", "gbench", "--out", out, "-q", *extra],
                          capture_output=True, text=True)
    if made.returncode not in (0, 1):  # 1: a gate failed, which does not matter here
        raise SystemExit("zeppelin-bench run %s exited %d:\n%s%s" % (scenario, made.returncode, made.stdout,
                                                                      made.stderr))
    return os.path.join(out, "gbench.json")


def compare(python, script, base, candidate):
    answer = subprocess.run([python, script, "--no-color", "benchmarks", base, candidate], capture_output=True,
                            text=True)
    if answer.returncode != 0:
        raise SystemExit("compare.py exited %d:\n%s%s" % (answer.returncode, answer.stdout, answer.stderr))
    return answer.stdout


def rows_of(output, name):
    """compare.py's rows for one benchmark name: (suffix, columns) with suffix '', '_pvalue', '_mean', ..."""
    rows = []
    for line in output.splitlines():
        if not line.startswith(name):
            continue
        first, _, rest = line.partition(" ")
        if first == name or re.fullmatch(re.escape(name) + r"_(pvalue|mean|median|stddev|cv)", first):
            rows.append((first[len(name):], rest.split()))
    return rows


def load(path):
    with open(path) as f:
        return json.load(f)  # Python's json reads NaN, as compare.py does


def check_u_test(binary, quickstart, python, script, work, failures):
    files = []
    for seed in ("1", "2"):
        files.append(run(binary, quickstart, os.path.join(work, "seed-" + seed), "--seed", seed, "--iterations",
                         "10", "--system", "zeppelin|uniform-cp"))
    for path in files:
        for entry in load(path)["benchmarks"]:
            if entry.get("error_occurred"):
                failures.append("%s: quickstart entry %s is an error" % (path, entry["name"]))
    output = compare(python, script, files[0], files[1])
    print(output)
    names = sorted({e["run_name"] for e in load(files[0])["benchmarks"]})
    if not names:
        failures.append("the quickstart gbench file has no benchmarks")
    for name in names:
        rows = rows_of(output, name)
        iterations = [columns for suffix, columns in rows if suffix == ""]
        if len(iterations) != 10:
            failures.append("%s: %d per-iteration rows, not 10" % (name, len(iterations)))
        pvalue = [columns for suffix, columns in rows if suffix == "_pvalue"]
        if len(pvalue) != 1:
            failures.append("%s: no _pvalue row (compare.py's U test did not run)" % name)
            continue
        text = " ".join(pvalue[0])
        if "U Test, Repetitions: 10 vs 10" not in text or "WARNING" in text:
            failures.append("%s_pvalue: %s" % (name, text))
        for p in pvalue[0][:2]:
            if not 0 <= float(p) <= 1:
                failures.append("%s_pvalue: p = %s" % (name, p))
        for aggregate in ("_mean", "_median"):
            if not any(suffix == aggregate for suffix, _ in rows):
                failures.append("%s: no %s row" % (name, aggregate))


def is_nan(text):
    return text.lstrip("+-") == "nan"


def check_failed_system(path, name, expected_share, entries, failures):
    """Every entry of a system out of memory in some iteration: an error without a time, no aggregates."""
    if len(entries) != 10 or not all(e.get("error_occurred") is True for e in entries):
        failures.append("%s %s: not 10 error entries: %s" % (path, name, entries))
        return
    if not all(math.isnan(e["real_time"]) and math.isnan(e["cpu_time"]) for e in entries):
        failures.append("%s %s: an error entry has a time: %s" % (path, name, [e["real_time"] for e in entries]))
    if any(e["run_type"] != "iteration" for e in entries):
        failures.append("%s %s: aggregates follow a failed system" % (path, name))
    shares = set()
    for e in entries:
        share = re.match(r"out of memory in (\d+) of 10 iterations, ", e["error_message"])
        if share is None:
            failures.append("%s %s: error message %r" % (path, name, e["error_message"]))
        else:
            shares.add(int(share.group(1)))
    if len(shares) != 1 or not expected_share(next(iter(shares))):
        failures.append("%s %s: out of memory in %s of 10 iterations" % (path, name, sorted(shares)))


def check_no_normal_row(output, name, what, failures):
    """compare.py's rows of a system that failed on either side: nan everywhere, nothing to read as a time."""
    rows = rows_of(output, name)
    if not [row for suffix, row in rows if suffix == ""]:
        failures.append("%s: compare.py printed no row for %s" % (what, name))
    for suffix, columns in rows:
        if suffix in ("_mean", "_median"):
            failures.append("%s: an aggregate row for %s, which failed: %s" % (what, name, columns))
        elif suffix == "_pvalue":
            if not (is_nan(columns[0]) and is_nan(columns[1])):
                failures.append("%s: %s_pvalue reads a p-value: %s" % (what, name, columns))
        elif not (is_nan(columns[0]) and is_nan(columns[1]) and any(is_nan(c) for c in columns[2:6])):
            failures.append("%s: a normal-looking row for %s: %s" % (what, name, columns))


def check_out_of_memory(binary, oom_scenario, python, script, work, failures):
    # llama-3b: both systems fit everywhere; the scenario's llama-7b: packing-dp out of memory in some
    # iterations; llama-30b: both out of memory everywhere.
    files = {
        "fits": run(binary, oom_scenario, os.path.join(work, "fits"), "--set", "model.preset=llama-3b"),
        "partial": run(binary, oom_scenario, os.path.join(work, "partial")),
        "everywhere": run(binary, oom_scenario, os.path.join(work, "everywhere"), "--set",
                          "model.preset=llama-30b"),
    }
    ring, packing = "gbench-oom/ring-cp/iteration_time", "gbench-oom/packing-dp/iteration_time"
    entries = {}
    for case, path in files.items():
        by_name = {}
        for entry in load(path)["benchmarks"]:
            by_name.setdefault(entry["run_name"], []).append(entry)
        if sorted(by_name) != sorted([ring, packing]):
            failures.append("%s: systems %s" % (path, sorted(by_name)))
            return
        entries[case] = by_name
    for name in (ring, packing):
        if any(e.get("error_occurred") for e in entries["fits"][name]):
            failures.append("llama-3b: %s has error entries" % name)
    check_failed_system(files["partial"], packing, lambda k: 0 < k < 10, entries["partial"][packing], failures)
    if any(e.get("error_occurred") for e in entries["partial"][ring]):
        failures.append("llama-7b: %s (fits) has error entries" % ring)
    for name in (ring, packing):
        check_failed_system(files["everywhere"], name, lambda k: k == 10, entries["everywhere"][name], failures)

    for base, candidate, failed in (("fits", "partial", [packing]), ("partial", "fits", [packing]),
                                    ("fits", "everywhere", [ring, packing]), ("everywhere", "fits", [ring, packing]),
                                    ("partial", "partial", [packing]), ("everywhere", "everywhere", [ring, packing])):
        output = compare(python, script, files[base], files[candidate])
        print(output)
        what = "compare.py %s %s" % (base, candidate)
        for name in failed:
            check_no_normal_row(output, name, what, failures)
        if "-1.0000" in output:
            failures.append("%s: a row reads -1.0000:\n%s" % (what, output))
        if ring not in failed:  # ring-cp fitted on both sides: its U test ran
            pvalue = [c for suffix, c in rows_of(output, ring) if suffix == "_pvalue"]
            if len(pvalue) != 1 or is_nan(pvalue[0][0]) or "U Test, Repetitions: 10 vs 10" not in " ".join(pvalue[0]):
                failures.append("%s: %s_pvalue %s" % (what, ring, pvalue))


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    binary, quickstart, oom_scenario, work = sys.argv[1:]
    script = find_compare()
    if script is None:
        print("SKIP: Google Benchmark's compare.py is absent (Debian: apt-get install libbenchmark-tools, "
              "or set ZB_GBENCH_COMPARE)")
        return SKIP
    python = find_python()
    if python is None:
        print("FAIL: no Python with numpy and scipy for %s (scripts/install-deps.sh installs python3-numpy and "
              "python3-scipy)" % script)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []
    check_u_test(binary, quickstart, python, script, work, failures)
    check_out_of_memory(binary, oom_scenario, python, script, work, failures)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
