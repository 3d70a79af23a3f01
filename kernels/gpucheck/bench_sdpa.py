#!/usr/bin/env python3
"""Prints the attention timing table of scripts/gpu-check.sh: cuDNN SDPA forward and backward, the project's
own forward kernel, and torch.nn.functional.scaled_dot_product_attention forward and backward when torch is
importable (--no-torch leaves the torch columns out, and is not a failure).

Shapes match zb_gpucheck's timing: batch 1, HEADS heads (as many K/V heads), one causal sequence of each
length, head_dim D, bf16. FLOPs = 4 * s^2 * heads * d / 2 (causal: half of the two s x s x d GEMMs at 2
FLOPs per multiply-add), the FlashAttention convention; the backward counts 2.5 times that. TFLOP/s = FLOPs /
median time.

torch is timed like zb_gpucheck (kernels/gpucheck/timing.hpp): inputs uniform in [-1, 1] from a fixed seed
(never zeros, which run faster), 3 warm-up runs, then the median of 20 runs between CUDA events. The
backend is the one torch picks for these inputs (--torch-backend auto; on an H100/H200 that is usually
FLASH_ATTENTION, and CUDNN_ATTENTION in the PyTorch releases that prefer it); the table's title and the
JSON name it. The forward runs under no_grad; the backward is torch.autograd.grad of one retained forward
graph with a random dO (no .grad accumulation kernels in the timing).

--ours reads the "TIMING <len> <ms> <tflops>" lines printed by `zb_gpucheck time`, --cudnn the
"TIMING_CUDNN <len> <fwd ms> <fwd tflops> <bwd ms> <bwd tflops>" lines of `zb_gpucheck time-cudnn`.
--markdown PATH writes the table as Markdown, --json PATH the same figures (and the milliseconds) as JSON.
Exit 1 when a torch timing failed (out of memory, no kernel for this GPU); 0 otherwise.
"""
import argparse
import json
import math
import statistics
import sys

WARMUP_RUNS = 3
TIMED_RUNS = 20
SEED = 1234


def backend_names(torch):
    """{SDPBackend value: name} where torch has the enum, else {}."""
    try:
        from torch.nn.attention import SDPBackend  # a pybind11 enum: not iterable, but has __members__
        return {int(value): name for name, value in SDPBackend.__members__.items()}
    except (ImportError, AttributeError, TypeError, ValueError):
        return {}


def picked_backend(torch, q, k, v):
    """The backend torch's dispatcher picks for a causal SDPA of these tensors (a private helper: None when
    this PyTorch lacks it)."""
    try:
        choice = torch._fused_sdp_choice(q, k, v, None, 0.0, True)  # attn_mask, dropout_p, is_causal
    except (AttributeError, RuntimeError, TypeError):
        return None
    return backend_names(torch).get(int(choice), str(int(choice)))


def backend_context(torch, name):
    """A context that restricts SDPA to `name` (flash, cudnn, efficient), or a no-op for auto."""
    import contextlib
    if name == "auto":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    wanted = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
              "cudnn": SDPBackend.CUDNN_ATTENTION}[name]
    return sdpa_kernel([wanted])


def median_ms(torch, run):
    """Median milliseconds of run(): WARMUP_RUNS untimed, then TIMED_RUNS between CUDA events."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(WARMUP_RUNS + TIMED_RUNS):
        start.record()
        run()
        stop.record()
        torch.cuda.synchronize()
        if i >= WARMUP_RUNS:
            times.append(start.elapsed_time(stop))
    return statistics.median(times)


def time_torch_sdpa(torch, length, heads, head_dim, backend):
    """(forward ms, backward ms, backend name) of causal bf16 SDPA on uniform [-1, 1] inputs."""
    generator = torch.Generator(device="cuda")
    generator.manual_seed(SEED + length)

    def uniform():
        return torch.rand((1, heads, length, head_dim), device="cuda", dtype=torch.bfloat16,
                          generator=generator) * 2 - 1

    q, k, v, d_o = uniform(), uniform(), uniform(), uniform()
    sdpa = torch.nn.functional.scaled_dot_product_attention
    try:
        with backend_context(torch, backend):
            name = picked_backend(torch, q, k, v) if backend == "auto" else backend.upper()
            with torch.no_grad():
                forward = median_ms(torch, lambda: sdpa(q, k, v, is_causal=True))
            qg, kg, vg = (t.detach().requires_grad_(True) for t in (q, k, v))
            out = sdpa(qg, kg, vg, is_causal=True)
            backward = median_ms(
                torch, lambda: torch.autograd.grad(out, (qg, kg, vg), d_o, retain_graph=True))
            del out, qg, kg, vg
    finally:
        del q, k, v, d_o
        torch.cuda.empty_cache()
    return forward, backward, name


def read_timings(path, tag, fields):
    """{length: (floats...)} from the lines '<tag> <len> <fields numbers>' of a zb_gpucheck log."""
    found = {}
    if not path:
        return found
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 + fields and parts[0] == tag:
                    try:
                        found[int(parts[1])] = tuple(float(p) for p in parts[2:])
                    except ValueError:
                        pass
    except OSError as error:
        print(f"bench_sdpa: cannot read {path}: {error}", file=sys.stderr)
    return found


def tflops(flops, ms):
    return flops / (ms * 1e-3) / 1e12 if ms == ms and ms > 0 else float("nan")


def ratio(a, b):
    return a / b if a == a and b == b and b > 0 else float("nan")


def finite_or_none(x):
    return x if isinstance(x, float) and math.isfinite(x) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", required=True)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--ours", required=True, help="zb_gpucheck time output")
    parser.add_argument("--cudnn", help="zb_gpucheck time-cudnn output")
    parser.add_argument("--no-torch", action="store_true", help="leave the torch SDPA columns out")
    parser.add_argument("--torch-backend", choices=["auto", "flash", "cudnn", "efficient"], default="auto",
                        help="SDPA backend for torch (auto: the one torch picks, named in the output)")
    parser.add_argument("--markdown", help="also write the table as Markdown to this file")
    parser.add_argument("--json", help="also write the figures as JSON to this file")
    args = parser.parse_args()

    torch = None
    if not args.no_torch:
        try:
            import torch  # imported late so --help and --no-torch work without PyTorch
        except ImportError as error:
            print(f"bench_sdpa: cannot import torch ({error}); use --no-torch for the table without it",
                  file=sys.stderr)
            return 1
        if not torch.cuda.is_available():
            print("bench_sdpa: torch.cuda.is_available() is False; cannot time SDPA", file=sys.stderr)
            return 1
    ours = read_timings(args.ours, "TIMING", 2)
    cudnn = read_timings(args.cudnn, "TIMING_CUDNN", 4)
    nan = float("nan")

    rows, failed, backends = [], False, set()
    for length in args.lengths:
        flops = 4.0 * length * length * args.heads * args.head_dim / 2.0
        # zb_gpucheck's own TFLOP/s (the same FLOP count), so the table repeats the logs' figures exactly.
        cudnn_fwd_ms, cudnn_fwd, cudnn_bwd_ms, cudnn_bwd = cudnn.get(length, (nan, nan, nan, nan))
        ours_ms, ours_fwd = ours.get(length, (nan, nan))
        row = {"seq_len": length, "flops_forward": flops, "flops_backward": 2.5 * flops,
               "ours_fwd_ms": ours_ms, "ours_fwd_tflops": ours_fwd,
               "cudnn_fwd_ms": cudnn_fwd_ms, "cudnn_fwd_tflops": cudnn_fwd,
               "cudnn_bwd_ms": cudnn_bwd_ms, "cudnn_bwd_tflops": cudnn_bwd}
        if torch:
            try:
                fwd_ms, bwd_ms, backend = time_torch_sdpa(torch, length, args.heads, args.head_dim,
                                                          args.torch_backend)
                backends.add(backend or "unknown")
            except RuntimeError as error:  # e.g. out of memory or no kernel for this GPU
                print(f"bench_sdpa: torch SDPA failed at {length}: {error}", file=sys.stderr)
                fwd_ms = bwd_ms = nan
                backend = None
                failed = True
            row.update({"torch_backend": backend, "torch_fwd_ms": fwd_ms, "torch_fwd_tflops": tflops(flops, fwd_ms),
                        "torch_bwd_ms": bwd_ms, "torch_bwd_tflops": tflops(2.5 * flops, bwd_ms)})
            row["ours_over_torch_fwd"] = ratio(row["ours_fwd_tflops"], row["torch_fwd_tflops"])
        row["ours_over_cudnn_fwd"] = ratio(row["ours_fwd_tflops"], row["cudnn_fwd_tflops"])
        rows.append(row)

    columns = [("seq len", "seq_len", "{}"), ("ours fwd", "ours_fwd_tflops", "{:.1f}"),
               ("cuDNN fwd", "cudnn_fwd_tflops", "{:.1f}"), ("cuDNN bwd", "cudnn_bwd_tflops", "{:.1f}")]
    if torch:
        columns += [("torch fwd", "torch_fwd_tflops", "{:.1f}"), ("torch bwd", "torch_bwd_tflops", "{:.1f}"),
                    ("ours/torch fwd", "ours_over_torch_fwd", "{:.2f}")]
    columns += [("ours/cuDNN fwd", "ours_over_cudnn_fwd", "{:.2f}")]
    torch_text = ""
    if torch:
        torch_text = (f"torch {torch.__version__} SDPA backend {', '.join(sorted(backends)) or 'none'}, "
                      f"{torch.cuda.get_device_name()}; ")
    title = (f"{torch_text}batch 1, heads {args.heads}, head_dim {args.head_dim}, causal, bf16, TFLOP/s "
             f"(median of {TIMED_RUNS} runs; backward FLOPs 2.5x forward)")
    header = [c[0] for c in columns]
    cells = [[fmt.format(r[key]) for _, key, fmt in columns] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    print(title)
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for c in cells:
        print("  ".join(x.rjust(w) for x, w in zip(c, widths)))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(title + "\n\n| " + " | ".join(header) + " |\n|" + "---:|" * len(header) + "\n")
            for c in cells:
                f.write("| " + " | ".join(c) + " |\n")
    if args.json:
        document = {
            "config": {"batch": 1, "heads": args.heads, "kv_heads": args.heads, "head_dim": args.head_dim,
                       "causal": True, "dtype": "bf16", "timed_runs": TIMED_RUNS, "warmup_runs": WARMUP_RUNS,
                       "flops": "forward 4*s^2*heads*d/2, backward 2.5x forward"},
            "torch": ({"version": torch.__version__, "device": torch.cuda.get_device_name(),
                       "backend_requested": args.torch_backend, "backends_used": sorted(backends)}
                      if torch else None),
            "rows": [{k: (finite_or_none(v) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
