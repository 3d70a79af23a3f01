#!/usr/bin/env python3
"""A sweep spread over processes (issue 38, item 3), as a specification.

mode `mpirun` (needs mpirun; exit 77, skipped, without one):
* `mpirun -np 2 zeppelin-bench run scenarios/grid/ --out DIR` writes the same files as the one-process
  sweep into the same DIR: combined.json, combined.md and combined.html byte for byte, and every report
  set's report.json equal but for its volatile fields (provenance, planner_seconds, planner_share); the ranks' own
  sweep-shard-R-of-2.json are the only extra files, and rank R ran the scenarios at positions R, R + 2, ...

mode `shards` (no MPI needed: the launchers' variables are set by hand, as srun and Slurm set them):
* `--shard 0/2` and `--shard 1/2` as separate commands, then `--combine`: the one-process table again;
* two processes with SLURM_PROCID 0 and 1 of SLURM_STEP_NUM_TASKS 2 (srun): the same table; a gate that
  fails on rank 1 makes rank 0 exit 1 while rank 1 exits 0 (its results reached rank 0);
* rank 0 of 2 whose rank 1 never starts, and one whose rank 1 is killed mid-run: rank 0 gives up after
  ZB_SWEEP_STALL_S without a heartbeat, exits 3, and the table's rows of rank 1's scenarios name it;
* bad flags: --shard 2/2, --shard slurm-array outside a job array (and `--array=0-3` inside one is
  shard I of 4), --combine with other flags than the shards', --combine of a folder without shards,
  ZB_SWEEP_STALL_S=0.

Usage: sweep_test.py BENCH GRID_DIR FAILING_GATE_JSON WORK_DIR mpirun|shards [MPIEXEC]
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

# Two systems, two iterations (so that the rows carry paired intervals); the grid under mpirun takes one.
FAST = ["--iterations", "2", "--system", "^zeppelin$", "--system", "^ring-cp$", "-q"]
ONE_ITERATION = ["--iterations", "1"] + FAST[2:]
TABLE = ("combined.json", "combined.md", "combined.html")


def clean_environment():
    """This process's environment without any launcher's variables (ctest may itself run under one)."""
    prefixes = ("OMPI_", "PMIX_", "PMI_", "SLURM_", "MPI_LOCAL", "ZB_SWEEP")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def run(args, env=None, timeout=600):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env or clean_environment())


def without_volatile(report):
    report["provenance"] = None
    for system in report.get("systems", []):
        for section in ("samples", "aggregates"):
            for key in ("planner_seconds", "planner_share"):
                if key in system.get(section, {}):
                    system[section][key] = None
        for it in system.get("per_iteration", []):
            it["planner_seconds"] = None
            it["planner_share"] = None
    return report


def files_under(folder):
    out = set()
    for root, _, names in os.walk(folder):
        for name in names:
            out.add(os.path.relpath(os.path.join(root, name), folder))
    return out


def compare_sweeps(expected_dir, actual_dir, failures, what):
    """Every file of the one-process sweep is in the other, the same (report.json: volatile fields aside)."""
    expected = files_under(expected_dir)
    actual = {f for f in files_under(actual_dir) if not os.path.basename(f).startswith("sweep-shard-")}
    if expected != actual:
        failures.append("%s: files differ: only one-process %s, only spread %s"
                        % (what, sorted(expected - actual)[:5], sorted(actual - expected)[:5]))
    for name in sorted(expected & actual):
        a = os.path.join(expected_dir, name)
        b = os.path.join(actual_dir, name)
        if name.endswith("report.json"):
            same = without_volatile(json.load(open(a))) == without_volatile(json.load(open(b)))
        else:
            same = open(a, "rb").read() == open(b, "rb").read()
        if not same:
            failures.append("%s: %s differs from the one-process sweep's" % (what, name))


def one_process(bench, scenarios, out, failures, flags=FAST):
    """The reference: the sweep in one process, into `out`, moved to `out`.one."""
    made = run([bench, "run", *scenarios, "--out", out, *flags])
    if made.returncode != 0:
        failures.append("one-process sweep exited %d: %s" % (made.returncode, made.stderr))
    shutil.move(out, out + ".one")
    return out + ".one"


def mpirun_mode(bench, grid, work, mpiexec):
    failures = []
    if not mpiexec or shutil.which(mpiexec) is None:
        print("skipped: no mpirun on this machine (the `shards` mode covers the same protocol without one)")
        return 77
    version = run([mpiexec, "--version"]).stdout
    launcher = [mpiexec] + (["--oversubscribe", "--allow-run-as-root"] if re.search("Open MPI|OpenRTE", version) else []) + ["-np", "2"]
    out = os.path.join(work, "grid")
    reference = one_process(bench, [grid], out, failures, ONE_ITERATION)
    started = time.monotonic()
    spread = run(launcher + [bench, "run", grid, "--out", out, *ONE_ITERATION])
    seconds = time.monotonic() - started
    if spread.returncode != 0:
        failures.append("mpirun -np 2 exited %d:\n%s\n%s" % (spread.returncode, spread.stdout, spread.stderr))
    compare_sweeps(reference, out, failures, "mpirun -np 2")
    files = sorted(os.path.join(grid, f) for f in os.listdir(grid) if f.endswith(".json"))
    for rank in (0, 1):
        path = os.path.join(out, "sweep-shard-%d-of-2.json" % rank)
        if not os.path.exists(path):
            failures.append("rank %d wrote no %s" % (rank, path))
            continue
        positions = [r["position"] for r in json.load(open(path))["rows"]]
        if positions != list(range(rank, len(files), 2)):
            failures.append("rank %d ran positions %s, not every second from %d" % (rank, positions, rank))
    print("mpirun -np 2 over %d scenarios: %.1f s" % (len(files), seconds))
    return report(failures)


def srun_env(rank, tasks=2, job="4242"):
    env = clean_environment()
    env.update({"SLURM_PROCID": str(rank), "SLURM_STEP_NUM_TASKS": str(tasks), "SLURM_LOCALID": str(rank),
                "SLURM_JOB_ID": job, "SLURM_STEP_ID": "0", "ZB_SWEEP_STALL_S": "3"})
    return env


def srun(bench, args, tasks=2, killed_rank=None):
    """`tasks` processes as srun starts them; `killed_rank` is killed once its heartbeat file appears."""
    procs = [subprocess.Popen([bench, *args], env=srun_env(r, tasks), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in range(tasks)]
    if killed_rank is not None:
        out = args[args.index("--out") + 1]
        beat = os.path.join(out, "sweep-shard-%d-of-%d.alive" % (killed_rank, tasks))
        deadline = time.monotonic() + 120
        while not os.path.exists(beat) and time.monotonic() < deadline and procs[killed_rank].poll() is None:
            time.sleep(0.05)
        procs[killed_rank].send_signal(signal.SIGKILL)
    results = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        results.append((p.returncode, stdout, stderr))
    return results


def rows_of(folder):
    return json.load(open(os.path.join(folder, "combined.json")))["rows"]


def shards_mode(bench, grid, failing_gate, work):
    failures = []
    names = sorted(f for f in os.listdir(grid) if f.endswith(".json"))[:3]
    scenarios = [os.path.join(grid, n) for n in names]
    out = os.path.join(work, "three")
    reference = one_process(bench, scenarios, out, failures)

    # --shard I/N as separate commands (a job array's tasks), then --combine.
    for index in (0, 1):
        done = run([bench, "run", *scenarios, "--out", out, "--shard", "%d/2" % index, *FAST])
        if done.returncode != 0:
            failures.append("--shard %d/2 exited %d: %s" % (index, done.returncode, done.stderr))
    combined = run([bench, "run", *scenarios, "--out", out, "--combine", *FAST])
    if combined.returncode != 0:
        failures.append("--combine exited %d: %s" % (combined.returncode, combined.stderr))
    compare_sweeps(reference, out, failures, "--shard 0/2, 1/2, --combine")
    # --combine given other flags than the shards ran with is bad input naming the difference.
    other = run([bench, "run", *scenarios, "--out", out, "--combine", "--iterations", "3", "-q"])
    if other.returncode != 2 or "iterations: 2 there, 3 here" not in other.stderr:
        failures.append("--combine with other flags: exit %d, %s" % (other.returncode, other.stderr))
    # A shard's results gone: --combine names the shard in its rows and exits 3.
    os.remove(os.path.join(out, "sweep-shard-1-of-2.json"))
    missing = run([bench, "run", *scenarios, "--out", out, "--combine", *FAST])
    lost = [r for r in rows_of(out) if "shard 1 of 2: " in r.get("error", "")]
    if missing.returncode != 3 or [r["scenario"] for r in lost] != [names[1][:-5]]:
        failures.append("--combine without shard 1: exit %d, rows naming it %s" % (missing.returncode, lost))

    # srun: two ranks at once; the same table.
    shutil.rmtree(out)
    results = srun(bench, ["run", *scenarios, "--out", out, *FAST])
    if [r[0] for r in results] != [0, 0]:
        failures.append("srun ranks exited %s: %s" % ([r[0] for r in results], [r[2] for r in results]))
    compare_sweeps(reference, out, failures, "srun -n 2")

    # A gate that fails on rank 1 (position 1) is rank 0's exit code 1; rank 1 exits 0.
    gated = os.path.join(work, "gated")
    results = srun(bench, ["run", scenarios[0], failing_gate, "--out", gated, *FAST])
    if [r[0] for r in results] != [1, 0]:
        failures.append("a gate failing on rank 1: ranks exited %s, expected [1, 0]" % [r[0] for r in results])

    # Rank 1 never starts: rank 0 waits ZB_SWEEP_STALL_S (3 s) and names it; exit 3.
    lonely = os.path.join(work, "lonely")
    code = run([bench, "run", *scenarios, "--out", lonely, *FAST], env=srun_env(0)).returncode
    lost = [r for r in rows_of(lonely) if r.get("error", "").startswith("rank 1 of 2: no results")]
    if code != 3 or len(lost) != 1 or "heartbeat file never appeared" not in lost[0]["error"]:
        failures.append("rank 1 never started: exit %d, rows %s" % (code, rows_of(lonely)))

    # Rank 1 killed mid-run: the same, its heartbeat stopped.
    killed = os.path.join(work, "killed")
    results = srun(bench, ["run", *scenarios, "--out", killed, *FAST], killed_rank=1)
    lost = [r for r in rows_of(killed) if r.get("error", "").startswith("rank 1 of 2: no results")]
    if results[0][0] != 3 or len(lost) != 1 or "stopped changing" not in lost[0]["error"]:
        failures.append("rank 1 killed: rank 0 exited %d, rows %s" % (results[0][0], rows_of(killed)))

    # Bad flags.
    for args, expected in (
        (["--shard", "2/2"], "shard 2 of 2: shards are counted from 0"),
        (["--shard", "two"], "\"two\" is not I/N"),
        (["--shard", "slurm-array"], "SLURM_ARRAY_TASK_ID is not set"),
        (["--combine", "--out", os.path.join(work, "empty")], "the folder holds no shard results"),
    ):
        bad = run([bench, "run", *scenarios, *args, "-q"])
        if bad.returncode != 2 or expected not in bad.stderr:
            failures.append("%s: exit %d, %s" % (args, bad.returncode, bad.stderr))
    # Rank 0's stall limit is whole seconds, at least 1.
    zero = srun_env(0)
    zero["ZB_SWEEP_STALL_S"] = "0"
    bad = run([bench, "run", *scenarios, "--out", os.path.join(work, "zero"), *FAST], env=zero)
    if bad.returncode != 2 or "environment ZB_SWEEP_STALL_S" not in bad.stderr:
        failures.append("ZB_SWEEP_STALL_S=0: exit %d, %s" % (bad.returncode, bad.stderr))
    # A job array `--array=0-3`: task 2 is shard 2 of 4 (scenario position 2 of 3).
    array = clean_environment()
    array.update({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
                  "SLURM_ARRAY_TASK_MAX": "3"})
    task = run([bench, "run", *scenarios, "--out", os.path.join(work, "array"), "--shard", "slurm-array", *FAST],
               env=array)
    summary = os.path.join(work, "array", "sweep-shard-2-of-4.json")
    if task.returncode != 0 or not os.path.exists(summary) or \
            [r["position"] for r in json.load(open(summary))["rows"]] != [2]:
        failures.append("slurm-array task 2 of 4: exit %d, %s" % (task.returncode, task.stderr))
    return report(failures)


def report(failures):
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def main():
    bench, grid, failing_gate, work, mode = sys.argv[1:6]
    mpiexec = sys.argv[6] if len(sys.argv) > 6 else ""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if mode == "mpirun":
        return mpirun_mode(bench, grid, work, mpiexec)
    return shards_mode(bench, grid, failing_gate, work)


if __name__ == "__main__":
    sys.exit(main())
