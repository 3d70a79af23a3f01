#!/usr/bin/env python3
"""run --plan with a hand-edited plan (issue 38, red-team finding f), as a specification:

* a plan whose ops could deadlock (every rank's first ring recv made to wait for its send, so the ranks
  wait for each other in a cycle) is bad input: exit 2, one `error:` line per problem naming the file and
  `lower::verify` (it was exit 3 and one message with a literal \\x0a for each line break);
* sizes the scenario's model contradicts are bad input, named at the op's JSON path: a K/V send and its
  recv both claiming half the rows' bytes (`ranks[r].ops[i].bytes`), a GEMM's m (`...m`); in a compact
  file, where the file writes the op: a send inside a run is `ranks[0].ops[e].ops[j].bytes`, the run's
  entry and the op's place in it, not its id;
* the same edits are refused on the reference backend, which moved and multiplied the real rows and
  reported the edited plan verified;
* the unedited dump runs (exit 0).

Usage: plan_edits_test.py BENCH SIM_SCENARIO REFERENCE_SCENARIO WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys


def bench(*args):
    done = subprocess.run(list(args), capture_output=True, timeout=600)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def dump(bench_path, scenario, path):
    """The ring-cp plan of iteration 0 with every op listed (`--detail full` where the build has it)."""
    for extra in (["--detail", "full"], []):
        rc, out, err = bench(bench_path, "plan", scenario, "--system", "ring-cp", "--format", "json", *extra)
        if rc == 0:
            with open(path, "w") as f:
                f.write(out)
            return json.loads(out)
    sys.exit("plan failed: " + err)


def write(plan, path):
    with open(path, "w") as f:
        json.dump(plan, f)
    return path


def deadlocked(plan):
    """Every rank's first recv and first send reordered so that the send waits for the recv: a cycle."""
    plan = json.loads(json.dumps(plan))
    for rank in plan["ranks"]:
        ops = rank["ops"]
        send = next(op for op in ops if op["kind"] == "send")
        recv = next(op for op in ops if op["kind"] == "recv")
        a, b = send["id"], recv["id"]
        if a < b:  # adjacent in a ring plan: swap them, renumbering every dependency
            ops[a], ops[b] = ops[b], ops[a]
            for op in ops:
                op["deps"] = sorted({{a: b, b: a}.get(d, d) for d in op["deps"]})
            for i, op in enumerate(ops):
                op["id"] = i
            ops[a]["deps"] = [d for d in ops[a]["deps"] if d < a]
            send, recv = ops[b], ops[a]
        send["deps"] = sorted(set(d for d in send["deps"] if d < send["id"]) | {recv["id"]})
    return plan


def halved_send(plan):
    """Rank 0's first send and its recv both claim half the bytes; the rows are unchanged."""
    plan = json.loads(json.dumps(plan))
    send = next(op for op in plan["ranks"][0]["ops"] if op["kind"] == "send")
    send["bytes"] //= 2
    for op in plan["ranks"][send["peer"]]["ops"]:
        if op["kind"] == "recv" and op["peer"] == 0 and op["tag"] == send["tag"]:
            op["bytes"] = send["bytes"]
    if send.get("route", {}).get("part_bytes"):
        parts = send["route"]["part_bytes"]
        parts[0] += send["bytes"] - sum(parts)
    return plan, "ranks[0].ops[%d].bytes" % send["id"]


def halved_send_in_a_run(plan):
    """Compact form: a K/V send of rank 0 inside a run (a ring step, repetition 0) and the recv it meets both
    claim half the bytes. The problem must be named where the file writes the op (the run's path and the
    op's place in it), not at its id, which in a compact file is no entry of ranks[0].ops."""
    plan = json.loads(json.dumps(plan))
    found = None
    for e, entry in enumerate(plan["ranks"][0]["ops"]):
        for j, op in enumerate(entry.get("ops", []) if "run" in entry else []):
            if op["kind"] == "send" and op.get("kv_owner", -1) >= 0 and found is None:
                found = (e, j, op)
    if found is None:
        sys.exit("no run with a K/V send among rank 0's ops of the compact plan")
    e, j, send = found
    before = send["bytes"]
    send["bytes"] //= 2
    for entry in plan["ranks"][send["peer"]]["ops"]:
        for op in entry["ops"] if "run" in entry else [entry]:
            if op["kind"] == "recv" and op["peer"] == 0 and op["tag"] == send["tag"]:
                op["bytes"] = send["bytes"]
    if send.get("route", {}).get("part_bytes"):
        send["route"]["part_bytes"][0] += send["bytes"] - before
    return plan, "ranks[0].ops[%d].ops[%d].bytes" % (e, j), "ranks[0].ops[%d].bytes" % send["id"]


def smaller_gemm(plan):
    plan = json.loads(json.dumps(plan))
    gemm = next(op for op in plan["ranks"][1]["ops"] if op["kind"] == "gemm")
    gemm["m"] = 7
    return plan, "ranks[1].ops[%d].m: m is 7 but rank 1 holds" % gemm["id"]


def main():
    bench_path, sim_scenario, reference_scenario, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []

    def expect_refused(scenario, path, expected, backend=()):
        rc, out, err = bench(bench_path, "run", scenario, *backend, "--plan", path, "-q", "--out",
                             os.path.join(work, "out"))
        lines = [line for line in err.splitlines() if line.strip()]
        if rc != 2 or not any(expected in line for line in lines):
            failures.append("%s %s: exit %d (expected 2) without '%s'\nstderr:\n%s" %
                            (os.path.basename(path), " ".join(backend), rc, expected, err))
        if "\\x0a" in err or any(not line.startswith("error: ") for line in lines):
            failures.append("%s: not one readable error line per problem:\n%s" % (os.path.basename(path), err))
        return lines

    plan = dump(bench_path, sim_scenario, os.path.join(work, "plan.json"))
    rc, _, err = bench(bench_path, "run", sim_scenario, "--plan", os.path.join(work, "plan.json"), "-q", "--out",
                       os.path.join(work, "unedited"))
    if rc != 0:
        failures.append("the unedited dump exited %d:\n%s" % (rc, err))

    cycle = write(deadlocked(plan), os.path.join(work, "cycle.json"))
    lines = expect_refused(sim_scenario, cycle, "cycle.json: lower::verify: rank 0 instr")
    if not all("deadlock" in line for line in lines) or len(lines) < 2:
        failures.append("the deadlock is not reported problem by problem:\n" + "\n".join(lines))

    halved, path = halved_send(plan)
    expect_refused(sim_scenario, write(halved, os.path.join(work, "halved.json")), "halved.json: " + path)
    gemm, path = smaller_gemm(plan)
    expect_refused(sim_scenario, write(gemm, os.path.join(work, "gemm.json")), "gemm.json: " + path)

    # The compact form (the default): ops named where the file writes them.
    rc, out, err = bench(bench_path, "plan", sim_scenario, "--system", "ring-cp", "--format", "json")
    if rc != 0:
        sys.exit("plan failed: " + err)
    halved, path, id_path = halved_send_in_a_run(json.loads(out))
    lines = expect_refused(sim_scenario, write(halved, os.path.join(work, "compact-halved.json")),
                           "compact-halved.json: " + path)
    if path != id_path and any(id_path in line for line in lines):
        failures.append("the compact file's op is named by its id (%s), not where it is written:\n%s" %
                        (id_path, "\n".join(lines)))

    reference = dump(bench_path, reference_scenario, os.path.join(work, "reference.json"))
    halved, path = halved_send(reference)
    expect_refused(reference_scenario, write(halved, os.path.join(work, "reference-halved.json")),
                   "reference-halved.json: " + path, ("--backend", "reference"))
    gemm, path = smaller_gemm(reference)
    expect_refused(reference_scenario, write(gemm, os.path.join(work, "reference-gemm.json")),
                   "reference-gemm.json: " + path, ("--backend", "reference"))

    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        sys.exit(1)
    print("edited plans: a deadlock and contradicted sizes are exit 2, one line per problem, on sim and reference")


if __name__ == "__main__":
    main()
