#include "core/qualify/measurement.hpp"

#include <array>

#include "core/common/error.hpp"

namespace zb::qualify {
namespace {

constexpr std::array<Probe, 6> kProbes{Probe::gemm,     Probe::p2p_intra, Probe::attention,
                                       Probe::p2p_rail, Probe::all_rails, Probe::routed};

}  // namespace

const char* to_string(Probe probe) {
  switch (probe) {
    case Probe::gemm:
      return "gemm";
    case Probe::attention:
      return "attention";
    case Probe::p2p_intra:
      return "p2p-intra";
    case Probe::p2p_rail:
      return "p2p-rail";
    case Probe::all_rails:
      return "all-rails";
    case Probe::routed:
      return "routed";
  }
  return "?";
}

const char* unit_of(Probe probe) {
  return probe == Probe::gemm || probe == Probe::attention ? "FLOP/s" : "B/s";
}

nlohmann::ordered_json to_json(const Measurement& m) {
  return {{"probe", to_string(m.probe)},
          {"subject", m.subject},
          {"shape", m.shape},
          {"node", m.node},
          {"gpu", m.gpu},
          {"peer_node", m.peer_node},
          {"peer_gpu", m.peer_gpu},
          {"nic", m.nic},
          {"value", m.value},
          {"unit", unit_of(m.probe)},
          {"latency_seconds",
           m.latency >= 0 ? nlohmann::ordered_json(m.latency) : nlohmann::ordered_json(nullptr)},
          {"reaches_nominal", m.reaches_nominal}};
}

Measurement measurement_from_json(const nlohmann::json& json) {
  Measurement m;
  const std::string probe = json.at("probe").get<std::string>();
  bool known = false;
  for (const Probe p : kProbes)
    if (probe == to_string(p)) m.probe = p, known = true;
  if (!known)
    throw Error(ExitCode::runtime, Location{}, "a rank reported an unknown qualify probe \"" + probe + "\"");
  m.subject = json.at("subject").get<std::string>();
  m.shape = json.at("shape").get<std::string>();
  m.node = json.at("node").get<int>();
  m.gpu = json.at("gpu").get<int>();
  m.peer_node = json.at("peer_node").get<int>();
  m.peer_gpu = json.at("peer_gpu").get<int>();
  m.nic = json.at("nic").get<int>();
  m.value = json.at("value").get<double>();
  m.reaches_nominal = json.value("reaches_nominal", true);
  m.latency = json.at("latency_seconds").is_null() ? -1.0 : json.at("latency_seconds").get<double>();
  return m;
}

}  // namespace zb::qualify
