#include "core/exec/cuda/verify_pass.hpp"

#include <cstdio>
#include <memory>
#include <optional>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/device_arena.hpp"
#include "core/exec/cuda/pass_runner.hpp"
#include "core/exec/cuda/rank_comm.hpp"
#include "core/exec/cuda/verify_compute.hpp"
#include "core/exec/cuda/verify_layout.hpp"
#include "core/exec/cuda/verify_oracle.hpp"

namespace zb::cuda {

namespace {

// Why the pass is left out, before any GPU work; empty when it runs. The same on every rank.
std::string reason_to_skip(const lower::Program& program, const AttentionDims& dims, VerifyMode mode) {
  if (mode == VerifyMode::off) return "not verified (ZB_CUDA_VERIFY=off)";
  if (const std::string blocker = verification_blocker(program, dims); !blocker.empty())
    return "not verified: the correctness pass does not cover " + blocker;
  const double work = oracle_work(program, dims);
  if (mode == VerifyMode::automatic && work > kAutomaticVerifyWork) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "not verified: the float64 oracle would take %.3g multiply-adds on the busiest rank, "
                  "above the automatic limit of %.3g (ZB_CUDA_VERIFY=on verifies anyway)",
                  work, kAutomaticVerifyWork);
    return text;
  }
  return {};
}

// What one rank builds for the pass; destroyed (its arena freed) before the timed setup.
struct VerifySetup {
  explicit VerifySetup(int rank) : arena(rank) {}
  VerifyLayout layout;
  DeviceArena arena;
  std::unique_ptr<RankComm> comm;
  std::unique_ptr<VerifyCompute> compute;
  std::unique_ptr<PassRunner> runner;
};

}  // namespace

std::string run_correctness_pass(const lower::Program& program, const GlobalOrder& order, CudaWorld& world,
                                 const ModelSpec& model, AttentionKernel kernel, std::uint64_t seed,
                                 VerifyMode mode) {
  const AttentionDims dims{model.heads, model.kv_heads, model.head_dim()};
  if (std::string skip = reason_to_skip(program, dims, mode); !skip.empty()) return skip;
  const int rank = world.rank();
  const QkvGenerator generator(seed, dims);
  VerifySetup setup(rank);
  std::optional<Error> failure;
  try {
    setup.layout = derive_verify_layout(program, rank, dims);
    // Collective: every rank builds its comm (ncclCommSplit) before any can fail on its own.
    setup.comm = std::make_unique<RankComm>(program, rank, world, setup.arena, &setup.layout, dims);
    if (!setup.layout.problem.empty())
      throw Error(ExitCode::runtime, Location{}, "backend cuda: correctness pass: " + setup.layout.problem,
                  "the plan gives this rank attention over K/V rows that no transfer brings (the reference "
                  "backend names the "
                  "same gap: --backend reference)");
    setup.compute =
        std::make_unique<VerifyCompute>(program, rank, kernel, setup.layout, *setup.comm, setup.arena);
    setup.arena.allocate();
    setup.arena.fill_random(seed ^ 0xC0FFEEULL);  // unwritten bytes are noise, never a lucky zero
    setup.comm->write_payloads(generator);
    setup.compute->write_inputs(generator);
    setup.runner =
        std::make_unique<PassRunner>(program, order, rank, *setup.compute, *setup.comm, world.world());
  } catch (const Error& e) {
    failure = e;
  }
  world.agree(failure, "while setting up the correctness pass");

  PassRunner& runner = *setup.runner;
  runner.barrier();
  (void)runner.run(Pass::fwd);
  if (program.backward) {
    runner.barrier();
    (void)runner.run(Pass::bwd);
  }
  runner.barrier();
  check_cuda(cudaDeviceSynchronize(), rank, "cudaDeviceSynchronize",
             "backend cuda: after the correctness pass");

  std::optional<Error> check_failure;
  RankChecks mine;
  try {
    mine = sum_checks(setup.compute->check(generator));
  } catch (const Error& e) {
    check_failure = e;
  }
  world.agree(check_failure, "while checking the correctness pass");
  std::vector<RankChecks> all;
  for (const std::vector<char>& bytes : world.all_gather(mine.encode()))
    all.push_back(RankChecks::decode(bytes));
  return verdict(all, program.backward);
}

}  // namespace zb::cuda
