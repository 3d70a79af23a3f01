#!/usr/bin/env python3
"""Held-out validation of the cost model against published measurements (docs/VALIDATION.md).

Reads the rows from scenarios/validation/rows.json, runs zeppelin-bench (sim backend) once on every scenario
the rows name, reads each row's prediction from that scenario's report.json, and compares it with the
published figure: error = predicted / published - 1.

  scripts/validate-model.py                          print the table
  scripts/validate-model.py --write docs/VALIDATION.md   regenerate the table between the doc's markers
  scripts/validate-model.py --check                  exit 1 when a row's error leaves its bound
                                                     (a known miss: its guard)

Exit codes: 0 ok, 1 a row out of bounds (--check), 2 bad input, 3 a run failed. Standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- validation-table:begin (scripts/validate-model.py --write docs/VALIDATION.md) -->"
END = "<!-- validation-table:end -->"


def fail(code, message):
    print(f"validate-model: {message}", file=sys.stderr)
    sys.exit(code)


def default_bin():
    for candidate in ("build/cli/zeppelin-bench", "build/zeppelin-bench"):
        path = os.path.join(ROOT, candidate)
        if os.access(path, os.X_OK):
            return path
    return os.path.join(ROOT, "build/cli/zeppelin-bench")


def load_rows(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        fail(2, f"{path}: {e}")
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
        fail(2, f"{path}: no rows")
    seen = set()
    for r in rows:
        for key in ("id", "source", "published", "scenario", "extraction", "bound", "independence"):
            if key not in r:
                fail(2, f"{path}: row {r.get('id', '?')}: missing {key}")
        if r["id"] in seen:
            fail(2, f"{path}: duplicate row id {r['id']}")
        seen.add(r["id"])
        if r["extraction"].get("kind") not in EXTRACTORS:
            fail(2, f"{path}: row {r['id']}: unknown extraction kind {r['extraction'].get('kind')!r}")
        miss = r.get("known_miss")
        if miss is not None and not (isinstance(miss.get("guard"), (int, float)) and miss.get("reason")):
            fail(2, f"{path}: row {r['id']}: known_miss needs a reason and a numeric guard")
    return rows


def run_scenario(binary, scenario, out_dir):
    cmd = [binary, "run", os.path.join(ROOT, scenario), "--backend", "sim", "--out", out_dir, "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):  # 1: a gate failed; the reports are still written
        return scenario, None, f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}"
    try:
        with open(os.path.join(out_dir, "report.json"), encoding="utf-8") as f:
            return scenario, json.load(f), None
    except (OSError, ValueError) as e:
        return scenario, None, str(e)


def system_of(report, label):
    for s in report["systems"]:
        if s["label"] == label:
            if s.get("feasible_iterations", 0) < s.get("iterations", 1):
                raise ValueError(f"{label} ran out of memory in some iteration")
            return s
    raise ValueError(f"no system {label!r} in the report")


def tokens_per_second(report, ext):
    return system_of(report, ext["system"])["aggregates"]["tokens_per_second"]["mean"]


def tokens_per_second_per_gpu(report, ext):
    return tokens_per_second(report, ext) / ext["gpus"]


def ring_step_seconds(report, ext):
    for step in system_of(report, ext["system"])["ring_steps"]:
        if step["level"] == ext["level"] and step["pass"] == ext["pass"] and step["count"] > 0:
            return step["mean_seconds"] * ext.get("scale", 1.0)
    raise ValueError(f"no {ext['level']} {ext['pass']} ring steps for {ext['system']}")


def attention_tflops(report, ext):
    # One causal sequence of T tokens: 4 * hidden * T(T+1)/2 FLOPs (QK^T and PV over the causal pairs), the
    # measurement's own convention (docs/METRICS.md, "Qualification figures"), over the simulated attention
    # time of the one layer (breakdown of the critical rank, one GPU, forward only).
    t = ext["tokens"]
    flops = 4.0 * ext["hidden"] * t * (t + 1) / 2.0
    seconds = system_of(report, ext["system"])["breakdown"]["critical_rank"]["attention_seconds"]
    return flops / seconds / 1e12


def model_tflops_per_gpu(report, ext):
    # The report's model TFLOP/s per GPU (docs/METRICS.md): the model's FLOPs (an MoE layer's active
    # experts), whole iteration, over its time and GPUs, the convention Megatron-Core reports.
    return system_of(report, ext["system"])["aggregates"]["model_tflops_per_gpu"]["mean"]


EXTRACTORS = {
    "tokens_per_second": tokens_per_second,
    "model_tflops_per_gpu": model_tflops_per_gpu,
    "tokens_per_second_per_gpu": tokens_per_second_per_gpu,
    "ring_step_seconds": ring_step_seconds,
    "attention_tflops": attention_tflops,
}

EXTRACTION_TEXT = {
    "tokens_per_second": "mean tokens/s of {system}",
    "model_tflops_per_gpu": "mean model TFLOP/s per GPU of {system}",
    "tokens_per_second_per_gpu": "mean tokens/s of {system} / {gpus} GPUs",
    "ring_step_seconds": "{system}: mean {level} {pass} ring-step duration",
    "attention_tflops": "4·h·T(T+1)/2 / attention seconds ({system}, critical rank)",
}


def evaluate(rows, reports):
    results = []
    for r in rows:
        report = reports[r["scenario"]]
        ext = r["extraction"]
        try:
            predicted = EXTRACTORS[ext["kind"]](report, ext)
        except (KeyError, ValueError, ZeroDivisionError) as e:
            results.append(dict(row=r, predicted=None, error=None, status="no prediction", detail=str(e)))
            continue
        error = predicted / r["published"]["value"] - 1.0
        miss = r.get("known_miss")
        if abs(error) <= r["bound"]:
            status = "within bound" + (" (known miss no longer missing: drop its known_miss)" if miss else "")
            ok = True
        elif miss and abs(error) <= miss["guard"]:
            status, ok = "known miss", True
        else:
            status, ok = "OUT OF BOUND", False
        results.append(dict(row=r, predicted=predicted, error=error, status=status, ok=ok))
    return results


def fmt(x):
    if x is None:
        return "—"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def table(results, rows_path):
    lines = [
        "| row | source | published | predicted | error | bound | status | scenario · extraction |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        r = res["row"]
        unit = r["published"]["unit"]
        ext = r["extraction"]
        bound = f"±{r['bound'] * 100:.0f} %"
        if r.get("known_miss"):
            bound += f" (known miss, guard ±{r['known_miss']['guard'] * 100:.0f} %)"
        err = "—" if res["error"] is None else f"{res['error'] * 100:+.1f} %"
        source = f"[{r['source']['group']}]({r['source']['url']}): {r['source']['location']}"
        how = f"`{os.path.basename(r['scenario'])}` · " + EXTRACTION_TEXT[ext["kind"]].format(**ext)
        lines.append(f"| {r['id']} | {source} | {fmt(r['published']['value'])} {unit} | "
                     f"{fmt(res['predicted'])} {unit} | {err} | {bound} | {res['status']} | {how} |")
    errors = [(abs(res["error"]), res["row"]["id"], res["error"]) for res in results if res["error"] is not None]
    lines.append("")
    if errors:
        med = statistics.median(e for e, _, _ in errors)
        worst = max(errors)
        groups = sorted({res["row"]["source"]["group"] for res in results})
        inside = sum(1 for res in results if res["error"] is not None and abs(res["error"]) <= res["row"]["bound"])
        lines.append(f"**{len(results)} rows from {len(groups)} sources** ({', '.join(groups)}); "
                     f"**median absolute error {med * 100:.1f} %**; "
                     f"**worst row {worst[1]} ({worst[2] * 100:+.1f} %)**; "
                     f"{inside} of {len(results)} rows within their bound, "
                     f"{sum(1 for res in results if res['status'] == 'known miss')} known misses.")
    lines.append("")
    lines.append(f"Rows: `{os.path.relpath(rows_path, ROOT)}`; error = predicted / published − 1.")
    return "\n".join(lines)


def write_doc(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            doc = f.read()
    except OSError as e:
        fail(2, f"{path}: {e}")
    if BEGIN not in doc or END not in doc:
        fail(2, f"{path}: the markers {BEGIN!r} and {END!r} are missing")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + BEGIN + "\n" + text + "\n" + END + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("ZEPPELIN_BENCH", default_bin()), help="zeppelin-bench binary")
    ap.add_argument("--rows", default=os.path.join(ROOT, "scenarios/validation/rows.json"))
    ap.add_argument("--out", help="folder for the reports (default: a temporary folder)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--write", metavar="DOC", help="regenerate the table between DOC's markers")
    ap.add_argument("--check", action="store_true", help="exit 1 when a row's error leaves its bound")
    args = ap.parse_args()

    if not os.access(args.bin, os.X_OK):
        fail(2, f"{args.bin} is not an executable (build it, or pass --bin)")
    rows = load_rows(args.rows)
    scenarios = sorted({r["scenario"] for r in rows})
    for s in scenarios:
        if not os.path.isfile(os.path.join(ROOT, s)):
            fail(2, f"{s}: no such scenario")

    with tempfile.TemporaryDirectory(prefix="validate-model-") as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        reports = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_scenario, args.bin, s,
                                   os.path.join(out, os.path.splitext(os.path.basename(s))[0])) for s in scenarios]
            for fut in concurrent.futures.as_completed(futures):
                scenario, report, err = fut.result()
                if err:
                    fail(3, f"{scenario}: {err}")
                reports[scenario] = report

    results = evaluate(rows, reports)
    text = table(results, args.rows)
    print(text)
    if args.write:
        write_doc(args.write, text)
        print(f"validate-model: wrote the table into {args.write}")
    if args.check:
        bad = [res for res in results if not res.get("ok")]
        for res in bad:
            err = "no prediction: " + res.get("detail", "") if res["error"] is None else f"{res['error'] * 100:+.1f} %"
            print(f"validate-model: {res['row']['id']}: {err} is outside its bound", file=sys.stderr)
        if bad:
            sys.exit(1)
        print(f"validate-model: all {len(results)} rows within their bounds (known misses within their guards)")


if __name__ == "__main__":
    main()
