// The measuring half of `calibrate`: kernels at the model's dimensions on every rank at once, then
// single messages per link class. The fitting half is calibration_fit.cpp.
#include "core/qualify/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include "core/common/error.hpp"
#include "core/cost/cost_model.hpp"
#include "core/exec/launch/launcher.hpp"
#include "core/qualify/calibration_budget.hpp"
#include "core/qualify/link_probes.hpp"
#include "core/qualify/probe_support.hpp"
#include "kernels/attention.hpp"
#include "kernels/attention_backward.hpp"
#include "kernels/gemm.hpp"
#include "kernels/status.hpp"

namespace zb::qualify {
namespace {

using Clock = std::chrono::steady_clock;
using reference::Bytes;
using reference::Tag;

// The median of `repetitions` timed runs after one warm-up.
template <typename Run>
double median_seconds(int repetitions, Run run) {
  run();
  std::vector<double> times;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    const auto start = Clock::now();
    run();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  return n % 2 == 1 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

struct AttentionTimes {
  KernelPoint forward, backward;
};

AttentionTimes time_attention(const ModelSpec& model, int tokens, int repetitions) {
  const kernels::AttentionShape shape{.heads = model.heads,
                                      .kv_heads = model.kv_heads,
                                      .head_dim = model.head_dim(),
                                      .q_tokens = tokens,
                                      .kv_tokens = tokens,
                                      .out_rows = tokens};
  const kernels::AttentionBlockDesc block = kernels::causal_self_block(tokens);
  const auto rows = static_cast<std::size_t>(tokens);
  const auto q_elements = rows * static_cast<std::size_t>(model.heads * model.head_dim());
  const auto kv_elements = rows * static_cast<std::size_t>(model.kv_heads * model.head_dim());
  std::vector<float> q(q_elements), k(kv_elements), v(kv_elements), o(q_elements), d_o(q_elements),
      dq(q_elements), dk(kv_elements), dv(kv_elements), lse(rows * static_cast<std::size_t>(model.heads));
  fill_probe_values(q, 3);
  fill_probe_values(k, 4);
  fill_probe_values(v, 5);
  fill_probe_values(d_o, 6);
  const double pairs = static_cast<double>(tokens) * (tokens + 1) / 2.0;
  const double flops = 4.0 * model.hidden * pairs;  // CostModel::attention_fwd_flops
  AttentionTimes times;
  times.forward = {flops, static_cast<double>(tokens), median_seconds(repetitions, [&] {
                     kernels::throw_if_error(kernels::attention_forward(shape, {&block, 1}, q, k, v, o, lse),
                                             "calibrate attention");
                   })};
  times.backward = {flops, static_cast<double>(tokens), median_seconds(repetitions, [&] {
                      kernels::throw_if_error(
                          kernels::attention_backward(shape, {&block, 1}, q, k, v, o, d_o, lse, dq, dk, dv),
                          "calibrate attention backward");
                    })};
  return times;
}

KernelPoint time_gemm(int m, int n, int k, int repetitions) {
  std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n),
      c(static_cast<std::size_t>(m) * n);
  fill_probe_values(a, 1);
  fill_probe_values(b, 2);
  const double seconds = median_seconds(
      repetitions, [&] { kernels::throw_if_error(kernels::gemm(m, n, k, a, b, c), "calibrate gemm"); });
  return {2.0 * m * static_cast<double>(n) * k, static_cast<double>(m), seconds};
}

// The layer's GEMM shapes the calibration times (n, k of each; those with no work left out).
std::vector<GemmDims> layer_gemm_dims(const Scenario& scenario) {
  const CostModel cost(scenario);
  std::vector<GemmDims> out;
  for (const auto& g : cost.layer_gemms())
    if (g.n > 0 && g.k > 0) out.push_back({static_cast<long long>(g.n), static_cast<long long>(g.k)});
  return out;
}

void measure_kernels(const Scenario& scenario, const CalibrationShapes& shapes, CalibrationSamples& out,
                     const std::function<void(std::uint64_t)>& sync,
                     const std::function<void(const std::string&)>& say) {
  const std::vector<GemmDims> gemms = layer_gemm_dims(scenario);
  const std::size_t total = shapes.attention_tokens.size() + gemms.size() * shapes.gemm_rows.size();
  const auto started = std::chrono::steady_clock::now();
  const auto tell = [&](std::uint64_t step, const std::string& what) {
    if (!say) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    say(fmt::format("calibrate: shape {} of {}: {} ({} runs; {:.0f} s so far)", step, total, what,
                    shapes.repetitions, elapsed));
  };
  std::uint64_t step = 0;
  for (const int tokens : shapes.attention_tokens) {
    sync(++step);  // every rank starts each shape together: the run's ranks compute side by side
    tell(step, fmt::format("attention forward and backward, one causal sequence of {} tokens", tokens));
    const AttentionTimes t = time_attention(scenario.model, tokens, shapes.repetitions);
    out.attention_forward.push_back(t.forward);
    out.attention_backward.push_back(t.backward);
  }
  for (const GemmDims& g : gemms) {
    for (const int m : shapes.gemm_rows) {
      sync(++step);
      tell(step, fmt::format("GEMM {} x {} x {}", m, g.n, g.k));
      out.gemm.push_back(time_gemm(m, static_cast<int>(g.n), static_cast<int>(g.k), shapes.repetitions));
    }
  }
}

constexpr std::uint64_t kStepBase = 7'000'000;

// One call of the smallest attention shape and one GEMM of the smallest rows at the layer's largest
// (n, k): seconds per query-key pair and per multiply-add.
ProbeCosts probe_costs(const Scenario& scenario, const CalibrationShapes& shapes,
                       const std::vector<GemmDims>& gemms) {
  ProbeCosts probe;
  if (!shapes.attention_tokens.empty()) {
    const int tokens = shapes.attention_tokens.front();
    const AttentionTimes t = time_attention(scenario.model, tokens, 1);
    probe.attention_pair_seconds =
        (t.forward.seconds + t.backward.seconds) / (static_cast<double>(tokens) * (tokens + 1) / 2.0);
  }
  if (!shapes.gemm_rows.empty() && !gemms.empty()) {
    GemmDims largest = gemms.front();
    for (const GemmDims& g : gemms)
      if (g.n * g.k > largest.n * largest.k) largest = g;
    const int m = shapes.gemm_rows.front();
    const KernelPoint p = time_gemm(m, static_cast<int>(largest.n), static_cast<int>(largest.k), 1);
    probe.gemm_mnk_seconds = p.seconds / (static_cast<double>(m) * static_cast<double>(largest.n) *
                                          static_cast<double>(largest.k));
  }
  return probe;
}

Tag transfer_tag(std::uint64_t id) {
  return Tag::make(reference::MessageKind::transfer, id);
}

// Ping-pong of one `bytes` message each way between ranks a and b: the one-way time is half the median
// round trip (both directions carry the same message).
void ping_pong(reference::Transport& t, int a, int b, const CalibrationShapes& shapes, std::uint64_t id,
               std::vector<TransferPoint>& out) {
  if (t.rank() != a && t.rank() != b) return;
  const int peer = t.rank() == a ? b : a;
  for (std::size_t size = 0; size < shapes.transfer_bytes.size(); ++size) {
    const std::int64_t bytes = shapes.transfer_bytes[size];
    const Bytes message(static_cast<std::size_t>(bytes));
    const Tag tag = transfer_tag(kStepBase + id * 64 + size);
    const double round_trip = median_seconds(shapes.repetitions, [&] {
      if (t.rank() == a) {
        t.send(peer, tag, message);
        (void)t.recv(peer, tag, shapes.timeout);
      } else {
        Bytes got = t.recv(peer, tag, shapes.timeout);
        t.send(peer, tag, std::move(got));
      }
    });
    if (t.rank() == a) out.push_back({static_cast<double>(bytes), round_trip / 2});
  }
}

// Rank 0 gets every rank's kernel points, as doubles (flops, rows, seconds).
void gather_points(reference::Transport& t, std::vector<KernelPoint>& points, std::uint64_t id,
                   std::chrono::milliseconds timeout) {
  const Tag tag = transfer_tag(kStepBase + 900'000 + id);
  if (t.rank() != 0) {
    Bytes payload(points.size() * sizeof(KernelPoint));
    if (!points.empty()) std::memcpy(payload.data(), points.data(), payload.size());
    t.send(0, tag, std::move(payload));
    return;
  }
  for (int r = 1; r < t.size(); ++r) {
    const Bytes payload = t.recv(r, tag, timeout);
    std::vector<KernelPoint> theirs(payload.size() / sizeof(KernelPoint));
    if (!theirs.empty()) std::memcpy(theirs.data(), payload.data(), theirs.size() * sizeof(KernelPoint));
    points.insert(points.end(), theirs.begin(), theirs.end());
  }
}

// Every rank takes rank 0's probe, so all of them cut the shapes alike (their steps must match).
ProbeCosts shared_probe(reference::Transport& t, ProbeCosts probe, std::chrono::milliseconds timeout) {
  const Tag tag = transfer_tag(kStepBase + 900'100);
  if (t.rank() == 0) {
    for (int r = 1; r < t.size(); ++r) {
      Bytes payload(sizeof(ProbeCosts));
      std::memcpy(payload.data(), &probe, sizeof(ProbeCosts));
      t.send(r, tag, std::move(payload));
    }
    return probe;
  }
  const Bytes payload = t.recv(0, tag, timeout);
  if (payload.size() == sizeof(ProbeCosts)) std::memcpy(&probe, payload.data(), sizeof(ProbeCosts));
  return probe;
}

// The shapes to measure: all of them, or those that fit shapes.budget_seconds, said on the reporting rank.
CalibrationShapes budgeted(const Scenario& scenario, const CalibrationShapes& shapes, reference::Transport* t,
                           const std::function<void(const std::string&)>& progress) {
  if (shapes.budget_seconds <= 0) return shapes;
  const std::vector<GemmDims> gemms = layer_gemm_dims(scenario);
  ProbeCosts probe = probe_costs(scenario, shapes, gemms);
  if (t != nullptr) probe = shared_probe(*t, probe, shapes.timeout);
  const BudgetedShapes b = fit_to_budget(shapes, gemms, probe, shapes.budget_seconds);
  if (progress) {
    progress(fmt::format("calibrate: --budget {:g} s: {}", shapes.budget_seconds, describe(b, gemms)));
    if (!b.within_budget)
      progress(
          "calibrate: even the smallest set (3 shapes of each kind, 1 run each) is over the budget; "
          "measuring it");
  }
  return b.shapes;
}

}  // namespace

CalibrationSamples measure_for_calibration(const Scenario& scenario, const CalibrationShapes& shapes,
                                           const std::function<void(const std::string&)>& progress) {
  const Launch launch = process_launch();
  const ClusterSpec& cluster = scenario.cluster;
  CalibrationSamples out;
  out.launch = describe(launch);
  if (!launch.multi_process()) {
    measure_kernels(
        scenario, budgeted(scenario, shapes, nullptr, progress), out, [](std::uint64_t) {}, progress);
    return out;
  }
  const std::unique_ptr<reference::Transport> transport = launched_transport(launch, cluster, "calibrate");
  reference::Transport& t = *transport;
  out.ranks = t.size();
  out.is_reporter = t.rank() == 0;
  const std::function<void(const std::string&)> say =
      out.is_reporter ? progress : std::function<void(const std::string&)>{};
  measure_kernels(
      scenario, budgeted(scenario, shapes, &t, say), out,
      [&](std::uint64_t step) { barrier(t, kStepBase + step, shapes.timeout); }, say);
  if (out.is_reporter && progress && (cluster.gpus_per_node > 1 || cluster.nodes > 1))
    progress("calibrate: the links (ping-pongs between GPU 0 and its peers)");
  barrier(t, kStepBase + 500'000, shapes.timeout);
  if (cluster.gpus_per_node > 1) ping_pong(t, 0, 1, shapes, 1, out.nvlink);
  barrier(t, kStepBase + 500'001, shapes.timeout);
  if (cluster.nodes > 1) ping_pong(t, 0, cluster.gpus_per_node, shapes, 2, out.nic);
  barrier(t, kStepBase + 500'002, shapes.timeout);
  gather_points(t, out.attention_forward, 1, shapes.timeout);
  gather_points(t, out.attention_backward, 2, shapes.timeout);
  gather_points(t, out.gemm, 3, shapes.timeout);
  barrier(t, kStepBase + 500'003, shapes.timeout);
  return out;
}

}  // namespace zb::qualify
