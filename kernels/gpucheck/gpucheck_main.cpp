// Standalone GPU check driver for scripts/gpu-check.sh: no GoogleTest, no project dependencies.
//
// Subcommands and their STABLE output lines (scripts/gpu-check.sh and scripts/gpu-summary.py parse them;
// docs/KERNELS.md lists them too; change them only together):
//   zb_gpucheck versions                 run-time facts, one per line:  VERSION <name> <value...>
//       names: gpu, sm_count, compute_capability, memory_gib, l2_mib, sm_clock_max_mhz,
//       memory_clock_max_mhz, memory_bus_bits, driver, cuda_runtime, cublaslt, cudnn, cudnn_frontend
//       (versions dotted: 13.0, 9.19.0). Clocks are the device's PEAK clocks (cudaDeviceGetAttribute has no
//       current clock; nvidia-smi's samples in clocks.csv are the current ones). Without a device: the
//       library versions, then "VERSION device none (<reason>)" and "FAIL: <reason>" (the reason starts
//       "no usable CUDA device"),
//       exit 1. cudnn is "none (<why>)" in a build without cudnn-frontend.
//   zb_gpucheck check [seed]             every correctness case: "  PASS|FAIL <name> ..." per case, then
//       "ALL PASS: 0 failure(s)" or "FAILED: <n> failure(s)"; exit 1 on any failure. cuDNN SDPA that is
//       missing from the build or not available (cudnn_sdpa_available) is a FAIL with its reason, not a skip.
//   zb_gpucheck time HEADS DIM LEN...    own causal bf16 forward, per length:
//       TIMING <len> <median_ms> <tflops>            or  TIMING <len> error <message>
//   zb_gpucheck time-cudnn HEADS DIM LEN...  cuDNN SDPA causal bf16, per length:
//       TIMING_CUDNN <len> <fwd_median_ms> <fwd_tflops> <bwd_median_ms> <bwd_tflops>
//                                                    or  TIMING_CUDNN <len> error <message>
//   zb_gpucheck time-gemm M N K          cuBLASLt bf16 GEMM (row-major C = A·B, fp32 accumulation):
//       TIMING_GEMM <m> <n> <k> <median_ms> <tflops>  or  TIMING_GEMM <m> <n> <k> error <message>
//   zb_gpucheck interference             compute/communication interference on one GPU (the cost model's
//       comm_compute_slowdown): GEMM 8192³ (and cuDNN SDPA causal fwd) alone and beside a comm-like copy
//       kernel (8/16/32 CTAs) and a 1-rank NCCL send/recv on another stream; small-message latency. Lines
//       "interference <what> key=value... -- <words>" and "latency <what> key=value... -- <words>", closing
//       with "interference summary comm_compute_slowdown=<x> source=<nccl-sendrecv|copy-ctas16>"; a failed
//       figure is "interference <what> error <message>" (exit 1). Without cuDNN / NCCL (build or run time):
//       "interference sdpa skipped -- ..." / "interference nccl skipped -- ...", not failures.
//       Reference: kernels/gpucheck/interference.cpp's top.
//   zb_gpucheck sanitize                 one small case of each kernel, for compute-sanitizer
//   zb_gpucheck bwd-variants [seed]      cuDNN backward under each SdpaBuildOptions (diagnosis)
//   zb_gpucheck time-bwd-layouts HEADS DIM LEN...  cuDNN causal forward and backward of one sequence under
//       graphs differing in one layout property at a time, and every engine for torch's layout (diagnosis):
//       "LAYOUT <len> | <layout> | engine <name> | fwd <ms> ms <tflops> TFLOP/s | bwd <ms> ms <tflops>
//       TFLOP/s"
// Each timing is also followed by "NOTE <tag> <len|m n k> median of <runs> runs[, <sets> operand sets]".
// Timings: random bf16 inputs uniform in [-1, 1] (never zeros), 3 warm-up runs, the MEDIAN of 20 runs
// between CUDA events, operand sets rotated when one fits in L2 (kernels/gpucheck/timing.hpp).
// FLOPs: attention forward 4·s²·heads·d / 2 (causal: half of QKᵀ and PV, 2 FLOPs per multiply-add),
// backward 2.5× the forward (the FlashAttention / PyTorch benchmark convention); GEMM 2·m·n·k.
// TFLOP/s = FLOPs / median time / 1e12.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cuda_attention.hpp"
#include "kernels/cuda_gemm.hpp"
#include "kernels/gpucheck/attention_check.hpp"
#include "kernels/gpucheck/interference.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"
#ifdef ZB_GPUCHECK_HAVE_CUDNN
#include "kernels/cuda_sdpa.hpp"
#endif

namespace {

namespace gc = zb::kernels::gpucheck;
using gc::CheckResult;
using zb::kernels::cuda::ElementType;

struct Reporter {
  int failures = 0;
  void operator()(const std::string& name, const CheckResult& r) {
    std::printf("  %-4s %-44s worst O/grad %.3f  worst LSE %.3f (of bound)%s%s\n", r.passed ? "PASS" : "FAIL",
                name.c_str(), r.output_error, r.lse_error, r.detail.empty() ? "" : "  ", r.detail.c_str());
    std::fflush(stdout);
    if (!r.passed) ++failures;
  }
};

void check_gemms(Reporter& report, std::uint64_t seed) {
  struct Shape {
    std::int64_t m, n, k;
    ElementType type;
    bool ta, tb, accumulate;
  };
  const Shape shapes[] = {{256, 384, 512, ElementType::bf16, false, false, false},
                          {129, 77, 200, ElementType::bf16, false, true, false},  // dX = dY·Wᵀ
                          {192, 256, 300, ElementType::bf16, true, false, true},  // dW += Xᵀ·dY
                          {128, 128, 1024, ElementType::f16, true, true, false}};
  for (const Shape& s : shapes)
    report("gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
               (s.type == ElementType::bf16 ? " bf16" : " f16") + (s.ta ? " Aᵀ" : "") + (s.tb ? " Bᵀ" : "") +
               (s.accumulate ? " +=" : ""),
           gc::check_gemm(s.m, s.n, s.k, s.type, s.ta, s.tb, s.accumulate, seed));
}

void check_cudnn(Reporter& report, std::uint64_t seed) {
#ifdef ZB_GPUCHECK_HAVE_CUDNN
  const zb::kernels::Status available = zb::kernels::cuda::cudnn_sdpa_available();
  if (!available) {
    report("cuDNN SDPA available", {false, 0, 0, available.message()});
    return;
  }
  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    const gc::SdpaTolerances t = gc::sdpa_tolerances(type);
    std::printf("  cuDNN %s tolerances: O %s; LSE %s; dQ/dK/dV %s\n",
                type == ElementType::bf16 ? "bf16" : "f16", gc::describe(t.o).c_str(),
                gc::describe(t.lse).c_str(), gc::describe(t.gradient).c_str());
  }
  for (const gc::SdpaCase& c : gc::sdpa_standard_cases()) {
    report("cudnn fwd " + c.name, gc::check_sdpa_forward(c, seed));
    report("cudnn bwd " + c.name, gc::check_sdpa_backward(c, seed + 1));
  }
  report("cudnn fwd long causal 32k gqa4 (48 sampled rows)",
         gc::check_sdpa_long_causal(32768, 8, 2, 128, 48, seed));
#else
  // The cuDNN SDPA is what the executor runs and what the table compares against: a build without it has
  // not checked the product, so that is a failure (with its reason), never a skip that still says ALL PASS.
  static_cast<void>(seed);
  report("cuDNN SDPA built",
         {false, 0, 0,
          "this build has no cudnn-frontend (ZEPPELIN_CUDNN_FRONTEND_DIR / .deps): cuDNN SDPA "
          "not checked"});
#endif
}

int run_checks(std::uint64_t seed) {
  std::printf("correctness (seed %llu; own kernels: O %s, LSE %s, per element)\n",
              static_cast<unsigned long long>(seed), gc::describe(gc::kOutputTolerance).c_str(),
              gc::describe(gc::kLseTolerance).c_str());
  Reporter report;
  for (const auto& c : gc::standard_cases()) report(c.name, gc::check_attention(c, seed));
  for (int head_dim : {64, 128})
    report("merge split keys d" + std::to_string(head_dim), gc::check_merge(head_dim, seed + 1));
  report("merge with empty (-inf) sides", gc::check_merge_empty_sides(seed + 3));
  report("pack/unpack round trip", gc::check_pack_round_trip(seed + 2));
  check_gemms(report, seed + 4);
  check_cudnn(report, seed + 5);
  std::printf("%s: %d failure(s)\n", report.failures == 0 ? "ALL PASS" : "FAILED", report.failures);
  return report.failures == 0 ? 0 : 1;
}

#ifdef ZB_GPUCHECK_HAVE_CUDNN
// The cuDNN backward cases whose entries do not tile Q (several entries per query row, s_q != s_kv)
// under each way of building the graphs, plus single-entry and MHA probes: which of cuDNN's ragged
// features (packed accumulators, several entries per call, GQA) a wrong gradient comes from.
int run_backward_variants(std::uint64_t seed) {
  std::vector<gc::SdpaCase> cases;
  for (const gc::SdpaCase& c : gc::sdpa_standard_cases())
    if (c.name.rfind("context-parallel cut bf16", 0) == 0 || c.name.rfind("ring backward", 0) == 0)
      cases.push_back(c);
  if (cases.size() == 2) {
    gc::SdpaCase mha = cases[0];
    mha.name = "context-parallel cut bf16 d128 MHA";
    mha.shape.kv_heads = mha.shape.heads;
    cases.push_back(mha);
    gc::SdpaCase one = cases[0];  // the cut's first block alone: 200 late queries over 700 keys
    one.name = "one bottom-right entry 200x700 gqa4";
    one.blocks = {one.blocks.front()};
    one.backward_blocks.clear();
    cases.push_back(one);
    gc::SdpaCase ring_mha = cases[1];
    ring_mha.name = "ring backward bf16 d128 MHA";
    ring_mha.shape.kv_heads = ring_mha.shape.heads;
    cases.push_back(ring_mha);
  }
  struct Variant {
    const char* name;
    zb::kernels::cuda::SdpaBuildOptions options;
  };
  // {ragged accumulators, one entry per call, graph-local scratch, packed inputs, square top-left}.
  // "first run" is the layout of the first H200 run (docs/gpu-runs/2026-12-04-h200), which gave wrong dQ
  // on these cases; "all bottom-right" is the default before square entries went top-left (run 3).
  const Variant variants[] = {{"default", {true, false, true, true, true}},
                              {"all bottom-right", {true, false, true, true, false}},
                              {"first run", {true, false, false, false, false}},
                              {"graph-local scratch only", {true, false, true, false, false}},
                              {"packed inputs only", {true, false, false, true, false}},
                              {"first run, dense accumulators", {false, false, false, false, false}},
                              {"first run, one entry per call", {true, true, false, false, false}}};
  // Only the default layout decides the exit status: the others reproduce earlier code, and the second
  // H200 run (docs/gpu-runs/2026-12-04-h200-run2) showed them failing as expected.
  Reporter report;
  int default_failures = 0;
  for (const gc::SdpaCase& c : cases) {
    for (const Variant& v : variants) {
      const int before = report.failures;
      report("bwd " + c.name + " [" + v.name + "]", gc::check_sdpa_backward(c, seed, v.options));
      if (&v == &variants[0] && report.failures > before) ++default_failures;
    }
  }
  std::printf(
      "%s: %d failure(s) of the default layout (%d of the diagnostic layouts, which reproduce "
      "earlier code)\n",
      default_failures == 0 ? "ALL PASS" : "FAILED", default_failures, report.failures - default_failures);
  return default_failures == 0 ? 0 : 1;
}
#endif

// One small case of everything that launches, so compute-sanitizer's run stays short.
int run_sanitize() {
  Reporter report;
  report("own forward (one case)", gc::check_attention(gc::standard_cases().front(), 7));
  report("merge with empty sides", gc::check_merge_empty_sides(7));
  report("gemm", gc::check_gemm(64, 96, 128, ElementType::bf16, false, true, true, 7));
#ifdef ZB_GPUCHECK_HAVE_CUDNN
  const auto cases = gc::sdpa_standard_cases();
  for (const gc::SdpaCase& c : cases) {
    if (c.name.rfind("context-parallel cut bf16", 0) != 0) continue;
    report("cudnn fwd " + c.name, gc::check_sdpa_forward(c, 7));
    report("cudnn bwd " + c.name, gc::check_sdpa_backward(c, 7));
  }
#endif
  std::printf("%s: %d failure(s)\n", report.failures == 0 ? "ALL PASS" : "FAILED", report.failures);
  return report.failures == 0 ? 0 : 1;
}

int run_timing(int heads, int head_dim, const std::vector<long long>& lengths, bool cudnn) {
  int errors = 0;
  for (long long length : lengths) {
    if (!cudnn) {
      const auto t = gc::time_causal_forward(length, heads, head_dim);
      if (t.error.empty()) {
        std::printf("TIMING %lld %.4f %.2f\n", length, t.milliseconds, t.tflops);
        std::printf("NOTE TIMING %lld median of %d runs\n", length, t.timed_runs);
      } else {
        std::printf("TIMING %lld error %s\n", length, t.error.c_str());
      }
      errors += t.error.empty() ? 0 : 1;
    } else {
#ifdef ZB_GPUCHECK_HAVE_CUDNN
      const auto t = gc::time_sdpa_causal(length, heads, head_dim);
      if (t.error.empty()) {
        std::printf("TIMING_CUDNN %lld %.4f %.2f %.4f %.2f\n", length, t.forward_ms, t.forward_tflops,
                    t.backward_ms, t.backward_tflops);
        std::printf("NOTE TIMING_CUDNN %lld median of %d runs (forward), %d runs (backward)\n", length,
                    t.forward_runs, t.backward_runs);
      } else {
        std::printf("TIMING_CUDNN %lld error %s\n", length, t.error.c_str());
      }
      errors += t.error.empty() ? 0 : 1;
#else
      // An error line (the parsers keep it as the length's error) and a failing exit: no cuDNN, no figure.
      std::printf("TIMING_CUDNN %lld error built without cudnn-frontend\n", length);
      ++errors;
#endif
    }
    std::fflush(stdout);
  }
  return errors == 0 ? 0 : 1;
}

// "13.0" from 13000 (cudaDriverGetVersion / cudaRuntimeGetVersion: 1000·major + 10·minor).
std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
// "9.19.0" from 91900 (cuDNN 9, cuBLASLt, cudnn-frontend: 10000·major + 100·minor + patch).
std::string library_version(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

// Every fact asked of the run-time libraries and the device, not of the headers the build saw (except
// cudnn_frontend, which is header-only): what the figures were measured with.
int run_versions() {
  int driver = 0, runtime = 0;
  const cudaError_t driver_error = cudaDriverGetVersion(&driver);
  std::printf("VERSION driver %s\n", driver_error == cudaSuccess && driver > 0
                                         ? cuda_version(driver).c_str()
                                         : "none (no NVIDIA driver loaded)");
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    std::printf("VERSION cuda_runtime %s\n", cuda_version(runtime).c_str());
  std::printf("VERSION cublaslt %s\n", library_version(zb::kernels::cuda::cublaslt_version()).c_str());
#ifdef ZB_GPUCHECK_HAVE_CUDNN
  std::printf("VERSION cudnn %s\n", library_version(zb::kernels::cuda::cudnn_backend_version()).c_str());
  std::printf("VERSION cudnn_frontend %s\n",
              library_version(zb::kernels::cuda::cudnn_frontend_version()).c_str());
#else
  std::printf("VERSION cudnn none (built without cudnn-frontend)\n");
#endif
  const zb::kernels::Status device = zb::kernels::cuda::device_available();
  int index = 0;
  cudaDeviceProp prop{};
  if (!device || cudaGetDevice(&index) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, index) != cudaSuccess) {
    const std::string reason = device ? "cudaGetDeviceProperties failed" : device.message();
    std::printf("VERSION device none (%s)\n", reason.c_str());
    // device_available's reason already starts "no usable CUDA device" (what gpu-check.sh greps for).
    std::printf("FAIL: %s\n", reason.c_str());
    return 1;
  }
  const auto attribute = [&](cudaDeviceAttr a) {
    int value = 0;
    return cudaDeviceGetAttribute(&value, a, index) == cudaSuccess ? value : -1;
  };
  std::printf("VERSION gpu %s\n", prop.name);
  std::printf("VERSION sm_count %d\n", prop.multiProcessorCount);
  std::printf("VERSION compute_capability %d.%d\n", prop.major, prop.minor);
  std::printf("VERSION memory_gib %.1f\n", static_cast<double>(prop.totalGlobalMem) / (1u << 30));
  std::printf("VERSION l2_mib %.1f\n", static_cast<double>(prop.l2CacheSize) / (1u << 20));
  // Peak clocks in kHz (CUDA 13 removed them from cudaDeviceProp; the attributes remain).
  if (const int khz = attribute(cudaDevAttrClockRate); khz > 0)
    std::printf("VERSION sm_clock_max_mhz %d\n", khz / 1000);
  if (const int khz = attribute(cudaDevAttrMemoryClockRate); khz > 0)
    std::printf("VERSION memory_clock_max_mhz %d\n", khz / 1000);
  if (const int bits = attribute(cudaDevAttrGlobalMemoryBusWidth); bits > 0)
    std::printf("VERSION memory_bus_bits %d\n", bits);
  return 0;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: zb_gpucheck versions | check [seed] | time HEADS HEAD_DIM LENGTH... | time-cudnn HEADS "
      "HEAD_DIM LENGTH... | time-gemm M N K | interference | sanitize | bwd-variants [seed] | "
      "time-bwd-layouts HEADS HEAD_DIM LENGTH...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  // Before the device check: the library versions are worth printing on a machine without a GPU.
  if (mode == "versions") return run_versions();
  const zb::kernels::Status device = zb::kernels::cuda::device_available();
  if (!device) {
    std::printf("FAIL: %s\n", device.message().c_str());
    return 1;
  }
  if (mode == "check") {
    const std::uint64_t seed =
        argc > 2 ? std::strtoull(argv[2], nullptr, 10)
                 : static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    return run_checks(seed);
  }
  if (mode == "sanitize") return run_sanitize();
  if (mode == "interference" && argc == 2) return gc::run_interference();
#ifdef ZB_GPUCHECK_HAVE_CUDNN
  if (mode == "bwd-variants")
    return run_backward_variants(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 11);
  if (mode == "time-bwd-layouts" && argc >= 5) {
    std::vector<long long> lengths;
    for (int i = 4; i < argc; ++i) lengths.push_back(std::atoll(argv[i]));
    return gc::run_backward_layout_timing(std::atoi(argv[2]), std::atoi(argv[3]), lengths);
  }
#endif
  if ((mode == "time" || mode == "time-cudnn") && argc >= 5) {
    std::vector<long long> lengths;
    for (int i = 4; i < argc; ++i) lengths.push_back(std::atoll(argv[i]));
    return run_timing(std::atoi(argv[2]), std::atoi(argv[3]), lengths, mode == "time-cudnn");
  }
  if (mode == "time-gemm" && argc == 5) {
    const auto t = gc::time_gemm(std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]));
    if (!t.error.empty()) {
      std::printf("TIMING_GEMM %s %s %s error %s\n", argv[2], argv[3], argv[4], t.error.c_str());
      return 1;
    }
    std::printf("TIMING_GEMM %s %s %s %.4f %.2f\n", argv[2], argv[3], argv[4], t.milliseconds, t.tflops);
    std::printf("NOTE TIMING_GEMM %s %s %s median of %d runs, %d operand set(s)\n", argv[2], argv[3], argv[4],
                t.timed_runs, t.operand_sets);
    return 0;
  }
  return usage();
}
