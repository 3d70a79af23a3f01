#pragma once
// What `zeppelin-bench qualify` measures (docs/QUALIFY.md): one Measurement per figure, in the spirit of
// nccl-tests and nvbandwidth: per GPU the throughput of the two kernels that dominate a layer (GEMM,
// causal attention), per link the point-to-point bandwidth and latency (GPU pairs inside a node; each
// rail between nodes), every rail at once, and a routed transfer (split over every NIC through proxy
// GPUs, as Zeppelin's routing layer sends) against a direct one. A Verdict is a figure checked against
// its floor (floors.hpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zb::qualify {

enum class Probe { gemm, attention, p2p_intra, p2p_rail, all_rails, routed };
[[nodiscard]] const char* to_string(Probe probe);  // "gemm", "attention", "p2p-intra", "p2p-rail", ...
[[nodiscard]] const char* unit_of(Probe probe);    // "FLOP/s" or "B/s"

struct Measurement {
  Probe probe = Probe::gemm;
  std::string subject;                // "node 0 GPU 2", "node 0 GPU 2 → node 1 GPU 2 (NIC 2)"
  std::string shape;                  // "m=n=k=512", "causal 2048 tokens", "16 MiB"
  int node = -1, gpu = -1;            // the GPU measured, or the sender
  int peer_node = -1, peer_gpu = -1;  // links: the receiver
  int nic = -1;                       // rails: the NIC (local index) the transfer leaves on
  double value = 0;                   // FLOP/s (kernels) or bytes/s (links)
  double latency = -1;  // links: one-way latency of a small message, seconds; −1 = not measured
  // The shape is large enough to reach the hardware's nominal rate, so a nominal floor applies to it
  // (nominal_floors.hpp); small shapes are held to their peers only.
  bool reaches_nominal = true;
};

struct Verdict {
  Measurement measurement;
  double floor = 0;          // same unit as the value; 0 = no floor applies
  std::string floor_source;  // "0.5 × median of p2p-rail (16 MiB)", "floors file", "informational"
  bool passed = true;
};

[[nodiscard]] nlohmann::ordered_json to_json(const Measurement& m);
[[nodiscard]] Measurement measurement_from_json(const nlohmann::json& json);

}  // namespace zb::qualify
