#!/usr/bin/env python3
"""Prints the attention timing table of scripts/gpu-check.sh: cuDNN SDPA (forward and backward), the
project's own forward kernel, and torch.nn.functional.scaled_dot_product_attention (flash backend,
causal, bf16) when torch is importable (--no-torch leaves that column out).

Shapes match zb_gpucheck's timing: batch 1, HEADS heads, one sequence of each length, head_dim D, bf16.
FLOPs = 4 * s^2 * heads * d / 2 (causal: half of the two s x s x d GEMMs), the FlashAttention convention;
the backward counts 2.5 times that.
--ours reads the "TIMING <len> <ms> <tflops>" lines printed by `zb_gpucheck time`, --cudnn the
"TIMING_CUDNN <len> <fwd ms> <fwd tflops> <bwd ms> <bwd tflops>" lines of `zb_gpucheck time-cudnn`.
"""
import argparse
import statistics
import sys


def sdpa_flash_context(torch):
    """The context manager that restricts SDPA to the flash backend, for old and new PyTorch."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel([SDPBackend.FLASH_ATTENTION])
    except ImportError:
        return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)


def time_sdpa(torch, length, heads, head_dim):
    """Median milliseconds of causal flash SDPA: 2 warm-up runs, then up to 20 runs or about 1 s."""
    shape = (1, heads, length, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    runs, spent = [], 0.0
    with sdpa_flash_context(torch):
        for i in range(22):
            if i >= 5 and spent >= 1000.0:
                break
            start.record()
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            stop.record()
            torch.cuda.synchronize()
            ms = start.elapsed_time(stop)
            spent += ms
            if i >= 2:
                runs.append(ms)
    del q, k, v
    torch.cuda.empty_cache()
    return statistics.median(runs)


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", required=True)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--ours", required=True, help="zb_gpucheck time output")
    parser.add_argument("--cudnn", help="zb_gpucheck time-cudnn output")
    parser.add_argument("--no-torch", action="store_true", help="leave the torch SDPA column out")
    parser.add_argument("--markdown", help="also write the table as Markdown to this file")
    args = parser.parse_args()

    torch = None
    if not args.no_torch:
        import torch  # imported late so --help and --no-torch work without PyTorch

        if not torch.cuda.is_available():
            print("bench_sdpa: torch.cuda.is_available() is False; cannot time SDPA", file=sys.stderr)
            return 1
    ours = read_timings(args.ours, "TIMING", 2)
    cudnn = read_timings(args.cudnn, "TIMING_CUDNN", 4)
    nan = float("nan")
    device = f"torch {torch.__version__}, {torch.cuda.get_device_name()}, " if torch else ""
    print(f"{device}batch 1, heads {args.heads}, head_dim {args.head_dim}, causal, bf16, TFLOP/s")
    header = ["seq len", "cuDNN fwd", "cuDNN bwd", "ours fwd"] + (["SDPA fwd", "ours/SDPA"] if torch else [])
    rows = []
    failed = False
    for length in args.lengths:
        flops = 4.0 * length * length * args.heads * args.head_dim / 2.0
        _, cudnn_fwd, _, cudnn_bwd = cudnn.get(length, (nan, nan, nan, nan))
        _, our_tflops = ours.get(length, (nan, nan))
        row = [f"{length}", f"{cudnn_fwd:.1f}", f"{cudnn_bwd:.1f}", f"{our_tflops:.1f}"]
        if torch:
            try:
                sdpa_ms = time_sdpa(torch, length, args.heads, args.head_dim)
                sdpa_tflops = flops / (sdpa_ms * 1e-3) / 1e12
            except RuntimeError as error:  # e.g. out of memory or no flash kernel for this GPU
                print(f"bench_sdpa: SDPA failed at {length}: {error}", file=sys.stderr)
                sdpa_tflops = nan
                failed = True
            ratio = our_tflops / sdpa_tflops if sdpa_tflops == sdpa_tflops and sdpa_tflops > 0 else nan
            row += [f"{sdpa_tflops:.1f}", f"{ratio:.2f}"]
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("| " + " | ".join(header) + " |\n|" + "---:|" * len(header) + "\n")
            for r in rows:
                f.write("| " + " | ".join(r) + " |\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
