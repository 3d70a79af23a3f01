#include "core/qualify/qualify_run.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "core/common/error.hpp"
#include "core/exec/launch/launcher.hpp"
#include "core/exec/reference/launcher.hpp"
#include "core/qualify/probe_support.hpp"

namespace zb::qualify {
namespace {

using reference::Bytes;

// Every rank's figures to rank 0, as JSON (a few dozen per rank).
std::vector<Measurement> gather(reference::Transport& t, std::vector<Measurement> mine,
                                std::chrono::milliseconds timeout) {
  const reference::Tag tag = reference::Tag::make(reference::MessageKind::result, 77);
  if (t.rank() != 0) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Measurement& m : mine) list.push_back(to_json(m));
    const std::string text = list.dump();
    Bytes payload(text.size());
    std::transform(text.begin(), text.end(), payload.begin(),
                   [](char c) { return static_cast<std::byte>(c); });
    t.send(0, tag, std::move(payload));
    return mine;
  }
  for (int r = 1; r < t.size(); ++r) {
    const Bytes payload = t.recv(r, tag, timeout);
    std::string text(payload.size(), '\0');
    std::transform(payload.begin(), payload.end(), text.begin(),
                   [](std::byte b) { return static_cast<char>(b); });
    for (const auto& entry : nlohmann::json::parse(text)) mine.push_back(measurement_from_json(entry));
  }
  return mine;
}

}  // namespace

void order_for_report(std::vector<Measurement>& all) {
  // Shapes in the order the sweep measured them (first appearance), not as strings sort: "causal 2048
  // tokens" before "causal 16384 tokens".
  std::map<std::pair<Probe, std::string>, std::size_t> sweep_position;
  for (const Measurement& m : all) sweep_position.emplace(std::pair{m.probe, m.shape}, sweep_position.size());
  std::stable_sort(all.begin(), all.end(), [&](const Measurement& a, const Measurement& b) {
    const bool ca = a.probe == Probe::gemm || a.probe == Probe::attention;
    const bool cb = b.probe == Probe::gemm || b.probe == Probe::attention;
    if (ca != cb) return ca;
    if (!ca) return false;
    const std::size_t sa = sweep_position.at({a.probe, a.shape}), sb = sweep_position.at({b.probe, b.shape});
    return std::tie(a.probe, sa, a.node, a.gpu) < std::tie(b.probe, sb, b.node, b.gpu);
  });
}

int QualifyResult::failures() const {
  return static_cast<int>(
      std::count_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return !v.passed; }));
}

QualifyResult run_qualify(const Scenario& scenario, const QualifyOptions& options) {
  const Launch launch = process_launch();
  const ClusterSpec& cluster = scenario.cluster;
  QualifyResult result;
  result.scenario = scenario.name;
  result.launch = describe(launch);
  if (!launch.multi_process()) {
    if (options.progress) options.progress("qualify: compute probes of this host (one process: no link)");
    result.verdicts = evaluate(run_compute_probes(0, 0, options.compute), options.floors);
    result.notes.push_back(
        "one process: only this host's compute figures were measured, as node 0 GPU 0; run under "
        "mpirun -np " +
        std::to_string(cluster.world_size()) +
        " (on one machine: scripts/emulated-cluster.sh run) to measure every GPU and link");
    return result;
  }
  const std::unique_ptr<reference::Transport> transport = launched_transport(launch, cluster, "qualify");
  reference::Transport& t = *transport;
  result.world_size = t.size();
  result.is_reporter = t.rank() == 0;
  // One rank at a time: on the reference backend the ranks of a node share the host's cores, and a
  // kernel timed while others run would measure the sharing, not the host.
  std::vector<Measurement> mine;
  const auto started = std::chrono::steady_clock::now();
  for (int turn = 0; turn < t.size(); ++turn) {
    if (result.is_reporter && options.progress) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const std::string to_go =
          turn == 0 ? "" : fmt::format(", about {:.0f} s to go", elapsed / turn * (t.size() - turn));
      options.progress(
          fmt::format("qualify: compute probes of rank {} of {} (node {} GPU {}; {:.0f} s so far{})", turn,
                      t.size(), cluster.node_of(turn), cluster.local_of(turn), elapsed, to_go));
    }
    if (turn == t.rank())
      mine = run_compute_probes(cluster.node_of(turn), cluster.local_of(turn), options.compute);
    barrier(t, 1'000'000 + static_cast<std::uint64_t>(turn), options.links.timeout);
  }
  if (result.is_reporter && options.progress)
    options.progress("qualify: the links (pairs, rails, all rails at once, routed against direct)");
  const std::vector<Measurement> links = run_link_probes(t, cluster, options.links);
  mine.insert(mine.end(), links.begin(), links.end());
  std::vector<Measurement> all = gather(t, std::move(mine), options.links.timeout);
  order_for_report(all);
  result.links_measured = true;
  result.verdicts = evaluate(all, options.floors);
  if (cluster.nodes < 2) result.notes.push_back("one node: no rail, all-rails or routed figure");
  return result;
}

}  // namespace zb::qualify
