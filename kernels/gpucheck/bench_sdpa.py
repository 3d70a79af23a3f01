#!/usr/bin/env python3
"""Times torch.nn.functional.scaled_dot_product_attention (flash backend, causal, bf16) and prints the
comparison table of scripts/gpu-check.sh.

Shapes match zb_gpucheck's timing: batch 1, HEADS heads, one sequence of each length, head_dim D, bf16.
FLOPs = 4 * s^2 * heads * d / 2 (causal: half of the two s x s x d GEMMs), the FlashAttention convention.
--ours reads the "TIMING <len> <ms> <tflops>" lines printed by `zb_gpucheck time`.
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


def read_ours(path):
    ours = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "TIMING":
                ours[int(parts[1])] = (float(parts[2]), float(parts[3]))
    return ours


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", required=True)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--ours", required=True, help="zb_gpucheck time output")
    parser.add_argument("--markdown", help="also write the table as Markdown to this file")
    args = parser.parse_args()

    import torch  # imported late so --help works without PyTorch

    if not torch.cuda.is_available():
        print("bench_sdpa: torch.cuda.is_available() is False; cannot time SDPA", file=sys.stderr)
        return 1
    ours = read_ours(args.ours)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, batch 1, heads {args.heads}, "
          f"head_dim {args.head_dim}, causal, bf16")
    header = ["seq len", "ours ms", "ours TFLOP/s", "SDPA ms", "SDPA TFLOP/s", "ratio"]
    rows = []
    for length in args.lengths:
        flops = 4.0 * length * length * args.heads * args.head_dim / 2.0
        try:
            sdpa_ms = time_sdpa(torch, length, args.heads, args.head_dim)
            sdpa_tflops = flops / (sdpa_ms * 1e-3) / 1e12
        except RuntimeError as error:  # e.g. out of memory or no flash kernel for this GPU
            print(f"bench_sdpa: SDPA failed at {length}: {error}", file=sys.stderr)
            sdpa_ms = sdpa_tflops = float("nan")
        our_ms, our_tflops = ours.get(length, (float("nan"), float("nan")))
        ratio = our_tflops / sdpa_tflops if sdpa_tflops == sdpa_tflops and sdpa_tflops > 0 else float("nan")
        rows.append([f"{length}", f"{our_ms:.3f}", f"{our_tflops:.1f}", f"{sdpa_ms:.3f}", f"{sdpa_tflops:.1f}",
                     f"{ratio:.2f}"])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("| " + " | ".join(header) + " |\n|" + "---:|" * len(header) + "\n")
            for r in rows:
                f.write("| " + " | ".join(r) + " |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
