// Standalone GPU check driver for scripts/gpu-check.sh: no GoogleTest, no project dependencies.
//   zb_gpucheck check [seed]            every correctness case; PASS/FAIL per case, exit 1 on any failure
//   zb_gpucheck time HEADS DIM LEN...   causal bf16 forward timing; one "TIMING len ms tflops" line each
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cuda_attention.hpp"
#include "kernels/gpucheck/attention_check.hpp"

namespace {

using zb::kernels::gpucheck::CheckResult;

int run_checks(std::uint64_t seed) {
  std::printf("correctness (seed %llu; tolerances: O rel %.0e, LSE abs %.0e)\n", static_cast<unsigned long long>(seed),
              zb::kernels::gpucheck::kOutputTolerance, zb::kernels::gpucheck::kLseTolerance);
  int failures = 0;
  const auto report = [&](const std::string& name, const CheckResult& r) {
    std::printf("  %-4s %-32s O err %.3e  LSE err %.3e%s%s\n", r.passed ? "PASS" : "FAIL", name.c_str(),
                r.output_error, r.lse_error, r.detail.empty() ? "" : "  ", r.detail.c_str());
    std::fflush(stdout);
    if (!r.passed) ++failures;
  };
  for (const auto& c : zb::kernels::gpucheck::standard_cases())
    report(c.name, zb::kernels::gpucheck::check_attention(c, seed));
  for (int head_dim : {64, 128})
    report("merge split keys d" + std::to_string(head_dim), zb::kernels::gpucheck::check_merge(head_dim, seed + 1));
  report("pack/unpack round trip", zb::kernels::gpucheck::check_pack_round_trip(seed + 2));
  std::printf("%s: %d failure(s)\n", failures == 0 ? "ALL PASS" : "FAILED", failures);
  return failures == 0 ? 0 : 1;
}

int run_timing(int heads, int head_dim, const std::vector<long long>& lengths) {
  int errors = 0;
  for (long long length : lengths) {
    const auto t = zb::kernels::gpucheck::time_causal_forward(length, heads, head_dim);
    if (!t.error.empty()) {
      std::printf("TIMING %lld error %s\n", length, t.error.c_str());
      ++errors;
    } else {
      std::printf("TIMING %lld %.4f %.2f\n", length, t.milliseconds, t.tflops);
    }
    std::fflush(stdout);
  }
  return errors == 0 ? 0 : 1;
}

int usage() {
  std::fprintf(stderr, "usage: zb_gpucheck check [seed] | zb_gpucheck time HEADS HEAD_DIM LENGTH...\n");
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
  if (mode == "time" && argc >= 5) {
    std::vector<long long> lengths;
    for (int i = 4; i < argc; ++i) lengths.push_back(std::atoll(argv[i]));
    return run_timing(std::atoi(argv[2]), std::atoi(argv[3]), lengths);
  }
  return usage();
}
