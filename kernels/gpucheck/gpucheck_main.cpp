// Standalone GPU check driver for scripts/gpu-check.sh: no GoogleTest, no project dependencies.
//   zb_gpucheck check [seed]               every correctness case; PASS/FAIL/SKIP per case, exit 1 on any
//   failure zb_gpucheck time HEADS DIM LEN...      own causal bf16 forward; one "TIMING len ms tflops" line
//   each zb_gpucheck time-cudnn HEADS DIM LEN...  cuDNN SDPA causal bf16; "TIMING_CUDNN len fwd_ms fwd_tflops
//                                          bwd_ms bwd_tflops" each
//   zb_gpucheck time-gemm M N K            cuBLASLt bf16 GEMM; "TIMING_GEMM m n k ms tflops"
//   zb_gpucheck sanitize                   one small case of each kernel, for compute-sanitizer
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cuda_attention.hpp"
#include "kernels/gpucheck/attention_check.hpp"
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
  static_cast<void>(report);
  static_cast<void>(seed);
  std::printf("  SKIP cuDNN SDPA: this build has no cudnn-frontend (ZEPPELIN_CUDNN_FRONTEND_DIR / .deps)\n");
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
      if (t.error.empty())
        std::printf("TIMING %lld %.4f %.2f\n", length, t.milliseconds, t.tflops);
      else
        std::printf("TIMING %lld error %s\n", length, t.error.c_str());
      errors += t.error.empty() ? 0 : 1;
    } else {
#ifdef ZB_GPUCHECK_HAVE_CUDNN
      const auto t = gc::time_sdpa_causal(length, heads, head_dim);
      if (t.error.empty())
        std::printf("TIMING_CUDNN %lld %.4f %.2f %.4f %.2f\n", length, t.forward_ms, t.forward_tflops,
                    t.backward_ms, t.backward_tflops);
      else
        std::printf("TIMING_CUDNN %lld error %s\n", length, t.error.c_str());
      errors += t.error.empty() ? 0 : 1;
#else
      std::printf("TIMING_CUDNN %lld skipped (built without cudnn-frontend)\n", length);
#endif
    }
    std::fflush(stdout);
  }
  return errors == 0 ? 0 : 1;
}

int usage() {
  std::fprintf(stderr,
               "usage: zb_gpucheck check [seed] | time HEADS HEAD_DIM LENGTH... | time-cudnn HEADS HEAD_DIM "
               "LENGTH... | time-gemm M N K | sanitize\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
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
    return 0;
  }
  return usage();
}
