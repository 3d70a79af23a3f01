// The annotated table of every cost-model constant, and the hardware-profile JSON that overrides them.
// The table is the single place a constant's default is justified; from_json/to_json walk it, so a new
// field cannot be added to HardwareProfile without also being readable, writable and documented here.
#include "core/config/hardware_profile.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/did_you_mean.hpp"
#include "core/config/json_reader.hpp"
#include "core/config/jsonc.hpp"

namespace zb {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// One constant: its JSON key, where it lives, the values that make sense, and why the default is what it is.
struct ProfileField {
  std::string_view key;
  double HardwareProfile::*member;
  double min;            // smallest allowed value
  bool min_exclusive;    // true: the value must be strictly greater than `min`
  double max;            // largest allowed value (inclusive)
  bool integer;          // the value must be a whole number
  std::string_view why;  // the reason for the default (also shown in docs/METRICS.md)
};

// The defaults themselves are the member initialisers in cost_model.hpp; the reasons are here.
constexpr std::array<ProfileField, 18> kProfileFields{{
    {"attention_efficiency", &HardwareProfile::attention_efficiency, 0.0, true, 1.0, false,
     "FlashAttention-2/3 reach about 50-75% of dense bf16 peak on long causal sequences with head "
     "dim 128 (FA3 reports ~740 of 989 TFLOP/s forward on H100, less backward); 0.60 is the fwd+bwd middle."},
    {"attention_half_tokens", &HardwareProfile::attention_half_tokens, 0.0, false, kInfinity, false,
     "Attention tiles are 64-128 query rows per head; a call with a few hundred query rows launches too "
     "few tiles to fill 132 SMs, so efficiency is assumed to halve at 256 query rows. Calibrate per GPU."},
    {"attention_call_overhead", &HardwareProfile::attention_call_overhead, 0.0, false, kInfinity, false,
     "Kernel launch (~3-5 us) plus the varlen kernel's tail wave; dominates for sub-1k-token chunks."},
    {"gemm_efficiency", &HardwareProfile::gemm_efficiency, 0.0, true, 1.0, false,
     "cuBLAS bf16 GEMMs with k, n >= 4096 sustain about 70-80% of peak on A100/H100."},
    {"gemm_half_rows", &HardwareProfile::gemm_half_rows, 0.0, false, kInfinity, false,
     "A GEMM with fewer rows than one 128-row output tile leaves most of each tile idle."},
    {"gemm_call_overhead", &HardwareProfile::gemm_call_overhead, 0.0, false, kInfinity, false,
     "Kernel launch plus cuBLAS heuristic dispatch, a few microseconds per GEMM."},
    {"sustained_compute_fraction", &HardwareProfile::sustained_compute_fraction, 0.0, true, 1.0, false,
     "The two efficiencies above are standalone kernel rates (what `calibrate` measures); inside a "
     "training step the same kernels run slower: clocks settle under the power limit, the CPU leaves "
     "launch gaps, and small kernels the model does not list (casts, dropout, rotary) take their share. "
     "Calibrated end to end: with it the default profile reproduces MosaicML llm-foundry's measured "
     "MPT-7B pre-training on 8 x H100 80GB, bf16, 2k sequences (10,643 tokens/s/GPU, MFU 46.4%; "
     "scripts/train/benchmarking/README.md) within 2% (scenarios/calibration/mpt7b-h100-2k.json)."},
    {"backward_attention_factor", &HardwareProfile::backward_attention_factor, 0.0, true, kInfinity, false,
     "FlashAttention backward runs 5 matmuls (S recompute, dV, dP, dQ, dK) against 2 forward: 2.5x."},
    {"backward_linear_factor", &HardwareProfile::backward_linear_factor, 0.0, true, kInfinity, false,
     "Each forward GEMM has a data-gradient and a weight-gradient GEMM of the same size: 2x."},
    {"p2p_bandwidth_efficiency", &HardwareProfile::p2p_bandwidth_efficiency, 0.0, true, 1.0, false,
     "NCCL send/recv bus bandwidth reaches about 85-95% of the nominal NVLink or InfiniBand rate."},
    {"nvlink_bandwidth_efficiency", &HardwareProfile::nvlink_bandwidth_efficiency, 0.0, false, 1.0, false,
     "Unset (0): intra-node links run at p2p_bandwidth_efficiency. `calibrate` sets it from the measured "
     "intra-node point-to-point rate, which differs from the inter-node one on real and emulated clusters."},
    {"nic_bandwidth_efficiency", &HardwareProfile::nic_bandwidth_efficiency, 0.0, false, 1.0, false,
     "Unset (0): NIC links (and the PCIe and core links on the inter-node path) run at "
     "p2p_bandwidth_efficiency. `calibrate` sets it from the measured rate of each rail."},
    {"nvlink_transfer_overhead", &HardwareProfile::nvlink_transfer_overhead, 0.0, false, kInfinity, false,
     "The cluster's NVLink latency is the wire's; NCCL's protocol adds little on top, so 0 by default. "
     "`calibrate` sets it to the measured one-way latency less the cluster's."},
    {"nic_transfer_overhead", &HardwareProfile::nic_transfer_overhead, 0.0, false, kInfinity, false,
     "As for NVLink: the cluster's NIC latency already holds the fabric's; `calibrate` measures the rest "
     "(proxy threads, MPI or NCCL protocol)."},
    {"activation_bytes_factor", &HardwareProfile::activation_bytes_factor, 0.0, true, kInfinity, false,
     "Korthikanti et al. 2022, 'Reducing Activation Recomputation in Large Transformer Models': "
     "s*b*h*(34 + 5*a*s/h) bytes per layer in 16-bit; selective recomputation drops the 5as/h term, "
     "leaving 34*h bytes per token per layer."},
    {"memory_reserve_fraction", &HardwareProfile::memory_reserve_fraction, 0.0, false, 0.99, false,
     "CUDA context, NCCL buffers, kernel workspaces and allocator fragmentation typically take 5-15% of "
     "HBM."},
    {"optimizer_bytes_per_param", &HardwareProfile::optimizer_bytes_per_param, 0.0, false, kInfinity, false,
     "Mixed-precision Adam (ZeRO, Rajbhandari et al. 2020): 16-bit weights 2 + grads 2, fp32 master 4, "
     "m 4, v 4 = 16 bytes per parameter."},
    {"model_state_shards", &HardwareProfile::model_state_shards, 0.0, false, kInfinity, true,
     "ZeRO-1 over the whole data-parallel world (0 = world size): the usual setting for CP/DP training "
     "without tensor parallelism."},
}};

// The shared suggestion helper of the scenario loader, over the profile's keys.
std::string profile_key_hint(std::string_view unknown) {
  std::vector<std::string> keys;
  for (const ProfileField& field : kProfileFields) keys.emplace_back(field.key);
  return suggestion_hint(unknown, keys);
}

std::string range_text(const ProfileField& field) {
  std::string text = field.min_exclusive ? "> " : ">= ";
  text += std::to_string(field.min);
  if (std::isfinite(field.max)) text += " and <= " + std::to_string(field.max);
  if (field.integer) text += ", a whole number";
  return text;
}

}  // namespace

HardwareProfile read_hardware_profile(const nlohmann::json& j, const Location& where, ProblemList& problems) {
  HardwareProfile profile;
  if (!j.is_object()) {
    problems.add(where, "a hardware profile must be a JSON object, not " + std::string(j.type_name()),
                 "write {\"gemm_efficiency\": 0.7, ...} with the keys to override");
    return profile;
  }
  for (const auto& [key, value] : j.items()) {
    const auto field = std::find_if(kProfileFields.begin(), kProfileFields.end(),
                                    // named again: clang before 16 cannot capture a structured binding
                                    [&name = key](const ProfileField& f) { return f.key == name; });
    Location at = where;
    at.json_path = child_path(where.json_path, key);
    if (field == kProfileFields.end()) {
      problems.add(at, "unknown key \"" + printable(key) + "\" in the hardware profile",
                   profile_key_hint(key));
      continue;
    }
    if (!value.is_number()) {
      problems.add(at, "expected a number, got " + std::string(value.type_name()),
                   "write a plain number " + range_text(*field));
      continue;
    }
    const double number = value.get<double>();
    const bool below = field->min_exclusive ? !(number > field->min) : !(number >= field->min);
    const bool fractional = field->integer && number != std::floor(number);
    if (!std::isfinite(number) || below || number > field->max || fractional) {
      problems.add(at, "value " + value.dump() + " is out of range", "use a value " + range_text(*field));
      continue;
    }
    profile.*(field->member) = number;
  }
  return profile;
}

HardwareProfile HardwareProfile::from_json(const nlohmann::json& j, const std::string& file) {
  Location whole_file;
  whole_file.file = file;
  ProblemList problems;
  HardwareProfile profile = read_hardware_profile(j, whole_file, problems);
  problems.throw_if_any();
  return profile;
}

std::vector<std::string_view> hardware_profile_keys() {
  std::vector<std::string_view> keys;
  for (const ProfileField& field : kProfileFields) keys.push_back(field.key);
  return keys;
}

HardwareProfileSpec load_hardware_profile_file(const std::string& file) {
  // Comments are allowed, as in scenarios: a measured profile wants a note of where each number came from.
  const nlohmann::json j = read_jsonc_file(file, max_hardware_profile_bytes);
  return {HardwareProfile::from_json(j, file), file};
}

nlohmann::json HardwareProfile::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const ProfileField& field : kProfileFields) j[std::string(field.key)] = this->*(field.member);
  return j;
}

}  // namespace zb
