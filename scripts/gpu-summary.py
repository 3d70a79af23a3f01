#!/usr/bin/env python3
"""The summary of one scripts/gpu-check.sh run: summary.json (every figure, with where it came from) and
summary.txt (the short table printed last), read from the run's logs folder.

Figures are parsed from the stable lines of zb_gpucheck (docs/KERNELS.md names them):
  VERSION <name> <value...>                               (zb_gpucheck versions)
  TIMING_GEMM <m> <n> <k> <median ms> <TFLOP/s>          (zb_gpucheck time-gemm)
  TIMING_CUDNN <len> <fwd ms> <fwd TFLOP/s> <bwd ms> <bwd TFLOP/s>   (zb_gpucheck time-cudnn)
  TIMING <len> <ms> <TFLOP/s>                            (zb_gpucheck time: the own forward kernel)
  interference <what...> key=value... [-- words]          (zb_gpucheck interference, interference.log)
  latency <what...> key=value... [-- words]
and from the CLI's own files (run/report.json, qualify/qualify.json, calibrate/profile.json) and
clocks.csv (nvidia-smi: timestamp, SM MHz, memory MHz, power W, temperature C, utilisation %).
Python 3.8+ standard library only: it runs on the GPU machine's python3.
"""
import argparse
import csv
import json
import os
import statistics


def read_lines(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def numbers(parts):
    out = []
    for p in parts:
        try:
            out.append(float(p))
        except ValueError:
            return None
    return out


def parse_versions(logs):
    found = {}
    for line in read_lines(os.path.join(logs, "versions.log")):
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] == "VERSION":
            found[parts[1]] = parts[2].strip()
    return found


def image_facts(logs, versions):
    """GPU and driver from nvidia-smi's line in image.txt, and torch's own versions, where the driver's
    `versions` did not say them (an older zb_gpucheck)."""
    facts = dict(versions)
    lines = read_lines(os.path.join(logs, "image.txt"))
    for i, line in enumerate(lines):
        if line.startswith("name, driver_version") and i + 1 < len(lines):
            cells = [c.strip() for c in lines[i + 1].split(",")]
            if len(cells) >= 2:
                facts.setdefault("gpu", cells[0])
                facts.setdefault("driver", cells[1])
    for line in read_lines(os.path.join(logs, "torch-import.log")):
        if line.startswith("torch "):
            facts.setdefault("torch", line[len("torch "):])
    return facts


def parse_timings(logs, name, tag, fields, keys):
    """{first field as int: {key: value}} from '<tag> <fields...>' lines; error lines kept as text."""
    rows = {}
    for line in read_lines(os.path.join(logs, name)):
        parts = line.split()
        if not parts or parts[0] != tag:
            continue
        values = numbers(parts[1:1 + fields])
        if values is None or len(values) != fields:
            rows[" ".join(parts[1:2])] = {"error": " ".join(parts[2:])}
            continue
        rows[int(values[0])] = dict(zip(keys, values[1:]))
    return rows


def parse_check(logs, name="check.log"):
    lines = read_lines(os.path.join(logs, name))
    # One line per case: "PASS <name> ...", "FAIL <name> ...", "SKIP <name> ..." (not "FAILED: n failure(s)").
    passed = sum(1 for l in lines if l.strip().startswith("PASS "))
    failed = [l.strip() for l in lines if l.strip().startswith("FAIL ")]
    skipped = [l.strip() for l in lines if l.strip().startswith("SKIP ")]
    return {"passed": passed, "failed": len(failed), "failures": failed[:20], "skipped": skipped[:20],
            "lines": [l.strip() for l in lines if l.strip().startswith(("PASS ", "FAIL "))][:60]}


def parse_interference(logs):
    """zb_gpucheck interference's lines: every figure as {"what", key: value...}, the small messages'
    latency, and comm_compute_slowdown (its summary line; when that is missing, e.g. the step timed out in
    NCCL, the GEMM's slowdown beside NCCL, else beside the copy kernel with 16 CTAs); the comm-first figure
    comm_compute_slowdown_resident (the summary-resident line, else the GEMM beside the resident copy kernel
    with 16 CTAs)."""
    figures, errors, skipped, latency = [], [], [], []
    summary = resident = wall = None
    for line in read_lines(os.path.join(logs, "interference.log")):
        body = line.split(" -- ", 1)
        parts = body[0].split()
        if not parts or parts[0] not in ("interference", "latency"):
            continue
        words = [p for p in parts[1:] if "=" not in p]
        fields = {}
        for p in parts[1:]:
            if "=" in p:
                key, value = p.split("=", 1)
                number = numbers([value])
                fields[key] = number[0] if number else value
        if "error" in words:
            errors.append(" ".join(parts[1:]))
            continue
        if "skipped" in words:
            skipped.append(" ".join(parts[1:2]) + ": " + (body[1].strip() if len(body) > 1 else ""))
            continue
        record = dict(fields, what=" ".join(words))
        if parts[0] == "latency":
            latency.append(record)
        elif words == ["summary"]:
            summary = record
        elif words == ["summary-resident"]:
            resident = record
        elif words == ["time"]:
            wall = fields.get("s")
        else:
            figures.append(record)
    if summary is None:
        for wanted in ({"with": "nccl-sendrecv"}, {"with": "copy", "ctas": 16.0}):
            for f in figures:
                if f["what"] == "gemm" and all(f.get(k) == v for k, v in wanted.items()) and "slowdown" in f:
                    summary = {"comm_compute_slowdown": f["slowdown"],
                               "source": f["with"] + ("-ctas16" if f["with"] == "copy" else ""),
                               "what": "derived by gpu-summary.py (no summary line)"}
                    break
            if summary:
                break
    if resident is None:
        for f in figures:
            if f["what"] == "gemm" and f.get("with") == "copy-resident" and f.get("ctas") == 16.0 \
                    and "slowdown" in f:
                resident = {"comm_compute_slowdown": f["slowdown"], "source": "copy-resident-ctas16",
                            "what": "derived by gpu-summary.py (no summary-resident line)"}
                break
    return {"comm_compute_slowdown": (summary or {}).get("comm_compute_slowdown"),
            "source": (summary or {}).get("source"),
            "comm_compute_slowdown_resident": (resident or {}).get("comm_compute_slowdown"),
            "source_resident": (resident or {}).get("source"), "wall_s": wall, "figures": figures,
            "latency": latency, "skipped": skipped, "errors": errors}


def interference_text(i):
    """summary.txt's lines for zb_gpucheck interference (none when the step did not run)."""
    if not (i["figures"] or i["latency"] or i["errors"] or i["skipped"]):
        return []
    slowdown = i["comm_compute_slowdown"]
    text = ["interference: comm_compute_slowdown " + (f"{slowdown:.3f} ({i['source']})" if slowdown is not None
                                                      else "not measured") +
            " = GEMM time beside a comm kernel / alone - 1 (published: 0.189, Lee et al. 2025)"]
    resident = i.get("comm_compute_slowdown_resident")
    if resident is not None:
        text.append(f"interference: comm_compute_slowdown comm-first {resident:.3f} ({i['source_resident']})"
                    " = GEMM launched once the comm kernel is resident / alone - 1")
    for f in i["figures"]:
        who = f["what"] + "".join(f" {k} {int(f[k])}" if isinstance(f[k], float) else f" {k} {f[k]}"
                                  for k in ("with", "ctas", "bytes") if k in f)
        cells = [f"{fmt(f.get('ms'), 3)} ms"] if "ms" in f else []
        for key, label in (("tflops", "TFLOP/s"), ("GBps", "GB/s"), ("slowdown", "slowdown"),
                           ("copy_GBps", "copy GB/s"), ("comm_GBps", "comm GB/s"), ("comm_busy", "comm busy")):
            if isinstance(f.get(key), float):
                cells.append(f"{label} {f[key]:.3f}" if key in ("slowdown", "comm_busy") else f"{label} {f[key]:.0f}")
        if isinstance(f.get("sms"), float):
            cells.append(f"on {int(f['sms'])} SMs")
        if isinstance(f.get("alone_before_ms"), float) and isinstance(f.get("alone_after_ms"), float):
            cells.append(f"alone before/after {f['alone_before_ms']:.3f}/{f['alone_after_ms']:.3f} ms")
        if "library" in f:
            cells.append(f"{f['library']} {f.get('version', '')}")
        text.append(f"  {who}: " + ", ".join(cells))
    if i["latency"]:
        text.append("  latency (us, back-to-back): " + ", ".join(
            f"{l['what']} {int(l['bytes']) if isinstance(l.get('bytes'), float) else '?'} B {fmt(l.get('us'), 2)}"
            for l in i["latency"]))
    if i.get("wall_s") is not None:
        text.append(f"  wall time: {i['wall_s']:.1f} s")
    text.extend("  skipped: " + s for s in i["skipped"])
    text.extend("  error: " + e for e in i["errors"][:5])
    return text


def parse_clocks(logs):
    columns = {"sm_mhz": [], "memory_mhz": [], "power_w": [], "temperature_c": [], "utilization_pct": []}
    try:
        with open(os.path.join(logs, "clocks.csv"), encoding="utf-8", errors="replace") as f:
            for row in csv.reader(f):
                values = numbers([c.strip() for c in row[1:6]]) if len(row) >= 6 else None
                if values:
                    for key, value in zip(columns, values):
                        columns[key].append(value)
    except OSError:
        pass
    out = {}
    for key, values in columns.items():
        if values:
            out[key] = {"samples": len(values), "min": min(values), "median": statistics.median(values),
                        "max": max(values)}
    return out


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def summarise_run(report):
    if not report:
        return None
    systems = []
    for s in report.get("systems", []):
        iteration = (s.get("aggregates") or {}).get("iteration_seconds") or {}
        systems.append({"label": s.get("label"), "feasible_iterations": s.get("feasible_iterations"),
                        "iterations": s.get("iterations"), "iteration_seconds_median": iteration.get("median"),
                        "mfu_mean": ((s.get("aggregates") or {}).get("mfu") or {}).get("mean"),
                        "verification": s.get("verification")})
    run = report.get("run", {})
    return {"backend": run.get("backend"), "simulated": run.get("simulated"),
            "backend_note": run.get("backend_note"),
            "libraries": (report.get("provenance") or {}).get("libraries"), "systems": systems}


def summarise_qualify(q):
    if not q:
        return None
    keep = {key: q.get(key) for key in ("source", "world_size", "links_measured", "passed", "failures")}
    keep["figures"] = [{k: f.get(k) for k in ("probe", "shape", "value", "unit", "floor", "passed")}
                       for f in q.get("figures") or []]
    return keep


def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", required=True)
    ap.add_argument("--steps", default="")
    ap.add_argument("--verdicts", default="", help="name=verdict;...")
    ap.add_argument("--notes", default="", help="name=note;...")
    ap.add_argument("--json", required=True)
    ap.add_argument("--text", required=True)
    args = ap.parse_args()
    logs = args.logs

    def pairs(text):
        return dict(p.split("=", 1) for p in text.split(";") if "=" in p)

    verdicts = pairs(args.verdicts)
    summary = {
        "kind": "measured",
        "verdicts": verdicts,
        "notes": pairs(args.notes),
        "versions": image_facts(logs, parse_versions(logs)),
        "image": read_lines(os.path.join(logs, "image.txt")),
        "check": parse_check(logs),
        "variants": parse_check(logs, "variants.log"),
        "gemm": parse_timings(logs, "gemm.log", "TIMING_GEMM", 5, ["n", "k", "median_ms", "tflops"]),
        "cudnn": parse_timings(logs, "cudnn.log", "TIMING_CUDNN", 5,
                               ["forward_ms", "forward_tflops", "backward_ms", "backward_tflops"]),
        "own": parse_timings(logs, "own.log", "TIMING", 3, ["forward_ms", "forward_tflops"]),
        "interference": parse_interference(logs),
        "torch": load_json(os.path.join(logs, "table.json")),
        "clocks": parse_clocks(logs),
        "verify": summarise_run(load_json(os.path.join(logs, "verify", "report.json"))),
        "run": summarise_run(load_json(os.path.join(logs, "run", "report.json"))),
        "qualify": summarise_qualify(load_json(os.path.join(logs, "qualify", "qualify.json"))),
        "calibrate": load_json(os.path.join(logs, "calibrate", "profile.json")),
    }
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, default=str)

    text = ["GPU check (measured): " + summary["versions"].get("gpu", "GPU ?") + ", driver " +
            summary["versions"].get("driver", "?") + ", CUDA runtime " + summary["versions"].get("cuda_runtime", "?") +
            ", cuDNN " + summary["versions"].get("cudnn", "?") + ", cuBLASLt " + summary["versions"].get("cublaslt", "?")]
    if "torch" in summary["versions"]:
        text.append("torch: " + summary["versions"]["torch"])
    text.append("steps: " + ", ".join(f"{n} {v}" for n, v in verdicts.items()))
    check = summary["check"]
    text.append(f"correctness: {check['passed']} passed, {check['failed']} failed" +
                (f" ({'; '.join(check['failures'][:3])})" if check["failures"] else ""))
    for m, row in summary["gemm"].items():
        if "tflops" in row:
            text.append(f"cuBLASLt bf16 GEMM {m}x{int(row['n'])}x{int(row['k'])}: {row['median_ms']:.3f} ms, "
                        f"{row['tflops']:.0f} TFLOP/s")
    text.append("attention causal bf16, 32 heads, d 128 (TFLOP/s): length | cuDNN fwd | cuDNN bwd | own fwd")
    lengths = sorted({k for k in list(summary["cudnn"]) + list(summary["own"]) if isinstance(k, int)})
    for length in lengths:
        c = summary["cudnn"].get(length, {})
        o = summary["own"].get(length, {})
        text.append(f"  {length:>6} | {fmt(c.get('forward_tflops')):>9} | {fmt(c.get('backward_tflops')):>9} | "
                    f"{fmt(o.get('forward_tflops')):>7}")
    table = os.path.join(logs, "table.md")
    if os.path.exists(table):
        text.append("comparison table (bench_sdpa.py):")
        text.extend("  " + l for l in read_lines(table))
    clocks = summary["clocks"]
    if clocks:
        text.append("during the timed steps: " + ", ".join(
            f"{k} {fmt(v['min'], 0)}..{fmt(v['max'], 0)} (median {fmt(v['median'], 0)})" for k, v in clocks.items()))
    variants = summary["variants"]
    if variants["lines"]:
        text.append("cuDNN backward variants:")
        text.extend("  " + l[:110] for l in variants["lines"])
    for step in ("verify", "run"):
        run = summary[step]
        if not run:
            continue
        for s in run["systems"]:
            text.append(f"{step} --backend cuda: {s['label']}: {s['feasible_iterations']}/{s['iterations']} iterations ran, "
                        f"median iteration {fmt(s['iteration_seconds_median'], 3)} s, MFU {fmt(s['mfu_mean'], 3)}, "
                        f"verification {json.dumps(s['verification'])}")
    q = summary["qualify"]
    if q:
        figures = [f"{f['probe']} {f['shape']} {f['value'] / 1e12:.0f}" for f in q["figures"] if f.get("value")]
        text.append(f"qualify: {'qualified' if q['passed'] else 'NOT qualified'} ({q['failures']} below floor); "
                    "TFLOP/s: " + ", ".join(figures))
    text.extend(interference_text(summary["interference"]))
    with open(args.text, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
