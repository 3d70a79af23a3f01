#include "core/exec/cuda/cuda_executor.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <tuple>

#include "core/exec/cuda/activity_capture.hpp"
#include "core/exec/cuda/cuda_world.hpp"
#include "core/exec/cuda/device_arena.hpp"
#include "core/exec/cuda/nccl_order.hpp"
#include "core/exec/cuda/node_nic_sampling.hpp"
#include "core/exec/cuda/pass_runner.hpp"
#include "core/exec/cuda/rank_comm.hpp"
#include "core/exec/cuda/rank_compute.hpp"
#include "core/exec/cuda/runtime_facts.hpp"
#include "core/exec/cuda/trace_events.hpp"
#include "core/exec/cuda/verify_pass.hpp"
#include "core/lower/estimate.hpp"

namespace zb::cuda {
namespace {

// What one rank built for a run. The comm side first: its constructor splits the world communicator,
// a collective call every rank must make even when its compute plans would fail.
struct RankSetup {
  explicit RankSetup(int rank) : arena(rank) {}
  DeviceArena arena;
  std::unique_ptr<RankComm> comm;
  std::unique_ptr<RankCompute> compute;
  std::unique_ptr<PassRunner> runner;
};

// The repetition whose slowest-rank time is the median (the lower middle for an even count).
std::size_t median_repetition(const std::vector<double>& seconds) {
  std::vector<std::size_t> index(seconds.size());
  std::iota(index.begin(), index.end(), 0);
  std::stable_sort(index.begin(), index.end(),
                   [&](std::size_t a, std::size_t b) { return seconds[a] < seconds[b]; });
  return index[(index.size() - 1) / 2];
}

// "1.2 ms (slowest rank)", and when the host's enqueueing took most of the pass's device span, that the
// span is bound by the host's launches: the GPU may have waited for work, so the figure is not the GPU's.
std::string enqueue_text(double enqueue_seconds, double span_seconds) {
  char milliseconds[32];
  std::snprintf(milliseconds, sizeof milliseconds, "%.3f", enqueue_seconds * 1e3);
  std::string out = std::string(milliseconds) + " ms (slowest rank)";
  if (span_seconds > 0 && enqueue_seconds >= 0.8 * span_seconds)
    out += ", most of its device span: launch-bound, the GPU may have waited for the host";
  return out;
}

}  // namespace

CudaExecutor::CudaExecutor(CudaOptions options) : options_(options) {}

void CudaExecutor::prepare(const ClusterSpec& cluster) {
  options_.validate();
  // Program world sizes are the cluster's GPU count (a TP plan is expanded to the real GPUs), so this is
  // the world every run() will ask for.
  const CudaWorld& world = CudaWorld::get(cluster.world_size());
  facts_ = ask_runtime_facts(world.rank(), world.device());
}

std::vector<std::string> shut_down_cuda(bool after_failure) {
  return CudaWorld::shutdown(after_failure);
}

Trace CudaExecutor::run(const lower::Program& program, const ExecContext& context) {
  options_.validate();
  CudaWorld& world = CudaWorld::get(program.world_size);  // device first (exit 3), then the launch (exit 2)
  const int rank = world.rank();
  Trace trace;
  trace.backend = "cuda";
  trace.world_size = program.world_size;
  trace.gpus_per_node = program.gpus_per_node;
  trace.nics_per_node = context.cluster().nics_per_node;
  trace.layers = context.cost.model().layers;
  trace.backward = program.backward;
  // The NCCL order follows the planner's nominal schedule: each transfer where the estimate expects it.
  const GlobalOrder order =
      derive_order(program, lower::schedule(program, lower::nominal_transfers(program, context.cost)));
  AttentionKernel kernel = AttentionKernel::own;
  std::optional<Error> failure;
  std::unique_ptr<NodeNicSampling> nics;
  try {
    // Rails and NIC counters take the scenario's rank r as GPU r % g of node r / g: so must the launch.
    if (program.gpus_per_node > 0 && world.device() != rank % program.gpus_per_node)
      throw Error(ExitCode::bad_input, Location{},
                  "backend cuda: rank " + std::to_string(rank) + " is local rank " +
                      std::to_string(world.device()) + " of its node, but the scenario has rank " +
                      std::to_string(rank) + " as GPU " + std::to_string(rank % program.gpus_per_node) +
                      " of node " + std::to_string(rank / program.gpus_per_node),
                  "start the ranks node by node: mpirun --map-by ppr:" +
                      std::to_string(program.gpus_per_node) + ":node, or srun --distribution=block");
    kernel = resolve_attention_kernel(options_.attention);
    nics = std::make_unique<NodeNicSampling>(options_, rank, program.gpus_per_node, trace.nics_per_node);
  } catch (const Error& e) {
    failure = e;
  }
  world.agree(failure, "while checking the placement, choosing the attention kernel and the NICs to sample");
  // The correctness pass first, in buffers of its own that are freed before the timed setup allocates.
  const std::string verified =
      run_correctness_pass(program, order, world, context.model(), kernel, context.seed, options_.verify);

  RankSetup setup(rank);
  try {
    setup.comm = std::make_unique<RankComm>(program, rank, world, setup.arena);
    setup.compute = std::make_unique<RankCompute>(program, rank, context.model(), kernel, setup.arena);
    setup.arena.allocate();
    setup.arena.fill_random(context.seed * 1000003ULL + static_cast<std::uint64_t>(rank));
    setup.runner =
        std::make_unique<PassRunner>(program, order, rank, *setup.compute, *setup.comm, world.world());
  } catch (const Error& e) {
    failure = e;
  }
  world.agree(failure, "while setting up the run");
  PassRunner& runner = *setup.runner;

  auto layer = [&](std::vector<PassTimes>* forward, std::vector<PassTimes>* backward) {
    runner.barrier();
    PassTimes f = runner.run(Pass::fwd);
    if (forward != nullptr) forward->push_back(std::move(f));
    if (!program.backward) return;
    runner.barrier();  // the layer barrier: the backward pass starts once every rank's forward is done
    PassTimes b = runner.run(Pass::bwd);
    if (backward != nullptr) backward->push_back(std::move(b));
  };
  // CUPTI starts before the warm-up, which absorbs its first-launch costs as it does the kernels'.
  ActivityCapture activity(options_.cupti, rank);
  activity.start();
  for (int w = 0; w < options_.warmup; ++w) layer(nullptr, nullptr);
  std::vector<PassTimes> forward, backward;
  for (int t = 0; t < options_.repetitions; ++t) layer(&forward, &backward);
  runner.barrier();
  activity.stop();
  // One extra layer with each node's NIC counters sampled, when any node samples: every rank runs it.
  if (world.max_over_ranks({nics->samples() ? 1.0 : 0.0}).front() > 0) {
    std::vector<PassTimes> sampled;
    nics->start();
    layer(&sampled, nullptr);
    runner.barrier();  // every rank's transfers of the layer have completed
    nics->stop(sampled.front(), context.cluster().nic.bandwidth);
  }

  // The slowest rank's time of every pass of every repetition, then the median repetition of each pass.
  // The host's enqueue times ride along in the same reduction (the slowest rank's of each pass).
  std::vector<double> seconds;
  for (const PassTimes& t : forward) seconds.push_back(t.seconds);
  for (const PassTimes& t : backward) seconds.push_back(t.seconds);
  for (const PassTimes& t : forward) seconds.push_back(t.enqueue_seconds);
  for (const PassTimes& t : backward) seconds.push_back(t.enqueue_seconds);
  seconds = world.max_over_ranks(std::move(seconds));
  const auto reps = static_cast<std::ptrdiff_t>(forward.size());
  const auto passes = static_cast<std::ptrdiff_t>(forward.size() + backward.size());
  const std::vector<double> forward_max(seconds.begin(), seconds.begin() + reps);
  const std::size_t fwd_rep = median_repetition(forward_max);
  trace.layer.forward = forward_max[fwd_rep];
  std::string timing =
      "pass times: the device span from an event recorded before the host enqueues the pass "
      "to the end of both streams; the host enqueued the median forward pass in " +
      enqueue_text(seconds[static_cast<std::size_t>(passes) + fwd_rep], trace.layer.forward);
  std::size_t bwd_rep = 0;
  if (program.backward) {
    const std::vector<double> backward_max(seconds.begin() + reps, seconds.begin() + passes);
    bwd_rep = median_repetition(backward_max);
    trace.layer.backward = backward_max[bwd_rep];
    timing += ", the backward in " +
              enqueue_text(seconds[static_cast<std::size_t>(passes + reps) + bwd_rep], trace.layer.backward);
  }
  trace.iteration_seconds = trace.layers * (trace.layer.forward + trace.layer.backward);

  RankRecord mine;
  add_pass_events(program, order, rank, Pass::fwd, forward[fwd_rep], 0.0, mine);
  activity.add_pass(Pass::fwd, forward[fwd_rep], 0.0, mine);
  if (program.backward) {
    add_pass_events(program, order, rank, Pass::bwd, backward[bwd_rep], trace.layer.forward, mine);
    activity.add_pass(Pass::bwd, backward[bwd_rep], trace.layer.forward, mine);
  }
  activity.add_notes(mine);
  nics->add_to(mine);
  std::vector<RankRecord> all;
  for (const std::vector<char>& bytes : world.all_gather(encode(mine))) all.push_back(decode(bytes));
  assemble_trace(program, all, trace);
  trace.ring_step_stats = ring_step_statistics(trace.ring_steps);
  trace.model_note = "measured on " + world.gpu_name() + " (cuda backend, " +
                     std::to_string(options_.warmup) + " warm-up, " + std::to_string(options_.repetitions) +
                     " timed repetitions, median); attention: " +
                     (kernel == AttentionKernel::cudnn ? "cuDNN SDPA" : "own kernels") + ", NCCL over " +
                     std::to_string(world.size()) + " processes; " + timing + "; " + verified;
  if (const std::string notes = distinct_notes(all); !notes.empty()) trace.model_note += "; " + notes;
  return trace;
}

}  // namespace zb::cuda
