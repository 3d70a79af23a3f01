#pragma once
// The hardware profile: every tunable constant of the cost model (core/cost), with its default. It is
// scenario input like the cluster and the model (the "hardware_profile" key or `--profile FILE`,
// docs/SCENARIOS.md), so it is read and validated here with the rest of the scenario; the cost model
// only consumes it. The reason for each default is in the table of hardware_profile.cpp.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.hpp"

namespace zb {

// Every tunable constant of the cost model, with its default and the reason for it in hardware_profile.cpp.
struct HardwareProfile {
  double attention_efficiency = 0.60;     // fraction of peak bf16 a large flash-attention kernel reaches
  double attention_half_tokens = 256.0;   // q-tokens per call at which attention efficiency is halved
  double attention_call_overhead = 8e-6;  // seconds per attention kernel call (launch + tail)
  double gemm_efficiency = 0.75;          // fraction of peak a large GEMM reaches
  double gemm_half_rows = 128.0;          // GEMM rows (tokens) at which efficiency is halved
  double gemm_call_overhead = 5e-6;       // seconds per GEMM call
  // Fraction of its standalone rate a tensor-core kernel (GEMM, attention) sustains inside a training
  // step; calibrated end to end against a published measurement (hardware_profile.cpp).
  double sustained_compute_fraction = 0.68;
  double backward_attention_factor = 2.5;  // backward attention FLOPs / forward
  double backward_linear_factor = 2.0;     // backward GEMM FLOPs / forward
  double p2p_bandwidth_efficiency = 0.90;  // achievable fraction of a link's nominal bandwidth (NCCL P2P)
  double nvlink_bandwidth_efficiency =
      0;  // the same for intra-node links alone; 0 = p2p_bandwidth_efficiency
  double nic_bandwidth_efficiency =
      0;  // the same for NIC (inter-node) links alone; 0 = p2p_bandwidth_efficiency
  // Seconds a message occupies its sender before its bytes move (LogGP's o: serialised per sending GPU,
  // unlike the link latency, which messages in flight overlap), by the route's class.
  double nvlink_transfer_overhead = 1e-6;
  double nic_transfer_overhead = 4.5e-6;
  // Interference (docs/SIMULATOR.md, "Interference"): a compute kernel runs (1 + slowdown) times longer
  // while communication kernels run on its GPU (its own transfers, and relays on a proxy); 0 = off.
  double comm_compute_slowdown = 0.189;
  double interference = 1;  // a flag (JSON true/false): 0 restores the free-communication model
  // Seeded compute jitter and stragglers (off by default; docs/SIMULATOR.md, "Jitter and stragglers").
  double compute_jitter = 0;              // coefficient of variation of a rank's compute speed per iteration
  double straggler_probability = 0;       // chance a rank is a straggler in an iteration
  double straggler_slowdown = 1.5;        // a straggler's compute takes this many times longer
  double activation_bytes_factor = 34.0;  // activation bytes per token per layer = factor·hidden (bf16)
  double memory_reserve_fraction = 0.10;  // HBM kept free for the allocator, workspace, fragmentation
  double optimizer_bytes_per_param = 16.0;  // bf16 weights+grads, fp32 master + Adam m,v: 2+2+4+4+4
  double model_state_shards = 0.0;          // ZeRO shards of optimizer state; 0 = over the whole world

  [[nodiscard]] bool interference_on() const { return interference != 0; }
  // The slowdown compute suffers under communication, 0 when interference is off.
  [[nodiscard]] double overlap_slowdown() const { return interference_on() ? comm_compute_slowdown : 0.0; }

  // The efficiency each link class runs at: its own when set, else the shared p2p figure.
  [[nodiscard]] double nvlink_efficiency() const {
    return nvlink_bandwidth_efficiency > 0 ? nvlink_bandwidth_efficiency : p2p_bandwidth_efficiency;
  }
  [[nodiscard]] double nic_efficiency() const {
    return nic_bandwidth_efficiency > 0 ? nic_bandwidth_efficiency : p2p_bandwidth_efficiency;
  }

  // Reads a hardware-profile JSON: an object whose keys are the fields above. Unknown keys and wrong
  // types are errors (exit 2) naming `file` and the key.
  static HardwareProfile from_json(const nlohmann::json& j, const std::string& file);
  // Every field, keyed as in the JSON.
  [[nodiscard]] nlohmann::json to_json() const;
};

// Reads the fields present in `j` over the defaults, recording each problem (unknown key with a
// suggestion, not a number, out of range) in `problems` at `where` with the key appended to its JSON path,
// so that the scenario loader can report a profile's problems together with the rest of the file's.
[[nodiscard]] HardwareProfile read_hardware_profile(const nlohmann::json& j, const Location& where,
                                                    ProblemList& problems);

// The JSON keys of HardwareProfile, in the table's order (for reports and docs).
[[nodiscard]] std::vector<std::string_view> hardware_profile_keys();

// The values a key accepts (docs/METRICS.md, "Allowed"): finite and in [min, max], or 0 where `zero_too`
// (0 means "unset"), a whole number where `whole`, true or false where `flag`; never subnormal.
struct HardwareProfileRange {
  std::string_view key;
  double min = 0;
  double max = 0;
  bool zero_too = false;
  bool whole = false;
  bool flag = false;
};
[[nodiscard]] std::vector<HardwareProfileRange> hardware_profile_ranges();

// Which profile a run uses and where it came from: "defaults" (no profile given), "inline" (an object in
// the scenario) or the profile file's path. Reports print both (docs/REPORT_FORMAT.md).
struct HardwareProfileSpec {
  HardwareProfile profile;
  std::string source = "defaults";
};

inline constexpr std::size_t max_hardware_profile_bytes = 1024u * 1024u;  // a profile is a dozen numbers

// Reads a hardware-profile file (JSON with // comments). Throws zb::Error (exit 2) naming the file, and
// the key for a bad value, when it cannot be read or is invalid.
[[nodiscard]] HardwareProfileSpec load_hardware_profile_file(const std::string& file);

}  // namespace zb
