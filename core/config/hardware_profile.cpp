// The annotated table of every cost-model constant, and the hardware-profile JSON that overrides them.
// The table is the single place a constant's default is justified; from_json/to_json walk it, so a new
// field cannot be added to HardwareProfile without also being readable, writable and documented here.
#include "core/config/hardware_profile.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/config/did_you_mean.hpp"
#include "core/config/json_reader.hpp"
#include "core/config/jsonc.hpp"

namespace zb {
namespace {

enum class Number : std::uint8_t { real, whole, flag };
constexpr Number real = Number::real;
constexpr Number whole = Number::whole;
constexpr Number flag = Number::flag;

// One constant: its JSON key, where it lives, the values that make sense, and why the default is what it is.
// Every range is closed and finite: a value the cost model divides by has a floor far above zero, and
// every value a ceiling, so that no profile can turn a time or a token capacity into infinity, zero or
// an overflowed integer (issue 38: activation_bytes_factor 1e-320 once gave a capacity of -2^63 tokens,
// gemm_efficiency 1e-310 an infinite GEMM, backward_linear_factor 1e308 a SimGrid crash). The bounds are
// generous on both sides: `calibrate` on the CPU reference backend writes efficiencies around 1e-4 of a
// GPU's peak, and what-if profiles go far beyond any real GPU.
struct ProfileField {
  std::string_view key;
  double HardwareProfile::*member;
  double min;            // smallest allowed value (inclusive)
  double max;            // largest allowed value (inclusive)
  bool zero_too;         // 0 is also allowed (it means "unset"), though below `min`
  Number kind;           // real, whole, or a flag (JSON true/false, stored as 1/0)
  std::string_view why;  // the reason for the default (also shown in docs/METRICS.md)
};

// Bounds shared by several fields.
constexpr double kLeastFraction = 1e-6;  // an efficiency or fraction of a nominal rate
constexpr double kMostSeconds = 1.0;     // a per-call or per-message overhead
constexpr double kMostRows = 1e9;        // a half-efficiency point, in rows or tokens

// The defaults themselves are the member initialisers in cost_model.hpp; the reasons are here.
// std::to_array: the size is the entries written, so no field is ever left value-initialised.
constexpr auto kProfileFields = std::to_array<ProfileField>({
    {"attention_efficiency", &HardwareProfile::attention_efficiency, kLeastFraction, 1.0, false, real,
     "FlashAttention-2/3 reach about 50-75% of dense bf16 peak on long causal sequences with head "
     "dim 128 (FA3 reports ~740 of 989 TFLOP/s forward on H100, less backward); 0.60 is the fwd+bwd middle."},
    {"attention_half_tokens", &HardwareProfile::attention_half_tokens, 0.0, kMostRows, false, real,
     "Attention tiles are 64-128 query rows per head; a call with a few hundred query rows launches too "
     "few tiles to fill 132 SMs, so efficiency is assumed to halve at 256 query rows. Calibrate per GPU."},
    {"attention_call_overhead", &HardwareProfile::attention_call_overhead, 0.0, kMostSeconds, false, real,
     "Kernel launch (~3-5 us) plus the varlen kernel's tail wave; dominates for sub-1k-token chunks."},
    {"gemm_efficiency", &HardwareProfile::gemm_efficiency, kLeastFraction, 1.0, false, real,
     "cuBLAS bf16 GEMMs with k, n >= 4096 sustain about 70-80% of peak on A100/H100."},
    {"gemm_half_rows", &HardwareProfile::gemm_half_rows, 0.0, kMostRows, false, real,
     "A GEMM with fewer rows than one 128-row output tile leaves most of each tile idle."},
    {"gemm_call_overhead", &HardwareProfile::gemm_call_overhead, 0.0, kMostSeconds, false, real,
     "Kernel launch plus cuBLAS heuristic dispatch, a few microseconds per GEMM."},
    {"sustained_compute_fraction", &HardwareProfile::sustained_compute_fraction, kLeastFraction, 1.0, false,
     real,
     "The two efficiencies above are standalone kernel rates (what `calibrate` measures); inside a "
     "training step the same kernels run slower: clocks settle under the power limit, the CPU leaves "
     "launch gaps, and small kernels the model does not list (casts, dropout, rotary) take their share. "
     "Calibrated end to end: with it the default profile reproduces MosaicML llm-foundry's measured "
     "MPT-7B pre-training on 8 x H100 80GB, bf16, 2k sequences (10,643 tokens/s/GPU, MFU 46.4%; "
     "scripts/train/benchmarking/README.md) within 2% (scenarios/calibration/mpt7b-h100-2k.json)."},
    {"backward_attention_factor", &HardwareProfile::backward_attention_factor, 0.01, 1000.0, false, real,
     "FlashAttention backward runs 5 matmuls (S recompute, dV, dP, dQ, dK) against 2 forward: 2.5x."},
    {"backward_linear_factor", &HardwareProfile::backward_linear_factor, 0.01, 1000.0, false, real,
     "Each forward GEMM has a data-gradient and a weight-gradient GEMM of the same size: 2x."},
    {"p2p_bandwidth_efficiency", &HardwareProfile::p2p_bandwidth_efficiency, kLeastFraction, 1.0, false, real,
     "NCCL send/recv bus bandwidth reaches about 85-95% of the nominal NVLink or InfiniBand rate."},
    {"nvlink_bandwidth_efficiency", &HardwareProfile::nvlink_bandwidth_efficiency, kLeastFraction, 1.0, true,
     real,
     "Unset (0): intra-node links run at p2p_bandwidth_efficiency. `calibrate` sets it from the measured "
     "intra-node point-to-point rate, which differs from the inter-node one on real and emulated clusters."},
    {"nic_bandwidth_efficiency", &HardwareProfile::nic_bandwidth_efficiency, kLeastFraction, 1.0, true, real,
     "Unset (0): NIC links (and the PCIe and core links on the inter-node path) run at "
     "p2p_bandwidth_efficiency. `calibrate` sets it from the measured rate of each rail."},
    {"nvlink_transfer_overhead", &HardwareProfile::nvlink_transfer_overhead, 0.0, kMostSeconds, false, real,
     "LogGP's o for NCCL P2P inside a node: the smallest messages take about 3 us end to end on H100 and "
     "B200 NVLink in nccl-tests (NVIDIA/nccl#1487, NVIDIA/nccl-tests#333, 'just over 3 microseconds' for "
     "the fixed cost); the presets' NVLink latency holds 2 us of it, so 1 us is the sender's per-message "
     "work (kernel launch, protocol handshake), paid one message after another. `calibrate` measures it."},
    {"nic_transfer_overhead", &HardwareProfile::nic_transfer_overhead, 0.0, kMostSeconds, false, real,
     "The same across nodes: an 8-byte all-reduce between two GPUs on two InfiniBand nodes takes 19-20 us "
     "in nccl-tests (NVIDIA/nccl-tests#150, A100, HDR), two network steps of about 9.5 us; the presets' "
     "NIC latency holds 5 us of each, so 4.5 us is the sender's per-message work (proxy thread, RDMA "
     "post, protocol). `calibrate` measures it."},
    {"comm_compute_slowdown", &HardwareProfile::comm_compute_slowdown, 0.0, 100.0, false, real,
     "Communication kernels take SMs and HBM bandwidth from the compute they overlap: Lee et al. 2025, "
     "'Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning' "
     "(arXiv 2507.03114), measured an average compute slowdown of 18.9 % (at most 40 %) under overlap "
     "on A100, H100, MI250 and MI210. Measured here on one H200 (docs/gpu-runs/2026-12-04-h200-run2, "
     "zb_gpucheck's `interference` step): 0 when the compute kernel holds the SMs first (the "
     "communication starves instead), 0.13-0.36 for a GEMM or attention launched beside an already "
     "resident 8-32-CTA communication kernel; the published average lies between the two orders."},
    {"interference", &HardwareProfile::interference, 0.0, 1.0, false, flag,
     "On: compute slows by comm_compute_slowdown while its GPU runs communication, which charges relays "
     "to their proxies, and gradient buckets share the NICs with the layers' traffic. false restores the "
     "earlier model, where communication costs compute nothing and buckets have the NICs to themselves (an "
     "ablation, never a default: NCCL kernels occupy SMs)."},
    {"compute_jitter", &HardwareProfile::compute_jitter, 0.0, 1.0, false, real,
     "Off (0): every rank computes at the profile's rate. A value c draws each rank's compute-time "
     "multiplier per iteration from a lognormal of mean 1 and coefficient of variation c, seeded by the "
     "scenario's seed, the iteration and the rank (clock and thermal variation between GPUs)."},
    {"straggler_probability", &HardwareProfile::straggler_probability, 0.0, 1.0, false, real,
     "Off (0): no stragglers. Otherwise each rank is, per iteration and seeded as above, a straggler "
     "with this probability, and its compute takes straggler_slowdown times longer."},
    {"straggler_slowdown", &HardwareProfile::straggler_slowdown, 1.0, 1000.0, false, real,
     "How much longer a straggler's compute takes; 1.5 when stragglers are on and no figure is given."},
    {"activation_bytes_factor", &HardwareProfile::activation_bytes_factor, 0.01, 1e6, false, real,
     "Korthikanti et al. 2022, 'Reducing Activation Recomputation in Large Transformer Models': "
     "s*b*h*(34 + 5*a*s/h) bytes per layer in 16-bit; selective recomputation drops the 5as/h term, "
     "leaving 34*h bytes per token per layer."},
    {"memory_reserve_fraction", &HardwareProfile::memory_reserve_fraction, 0.0, 0.99, false, real,
     "CUDA context, NCCL buffers, kernel workspaces and allocator fragmentation typically take 5-15% of "
     "HBM."},
    {"optimizer_bytes_per_param", &HardwareProfile::optimizer_bytes_per_param, 0.0, 1000.0, false, real,
     "Mixed-precision Adam (ZeRO, Rajbhandari et al. 2020): 16-bit weights 2 + grads 2, fp32 master 4, "
     "m 4, v 4 = 16 bytes per parameter."},
    {"model_state_shards", &HardwareProfile::model_state_shards, 0.0, 1e9, false, whole,
     "ZeRO-1 over the whole data-parallel world (0 = world size): the usual setting for CP/DP training "
     "without tensor parallelism."},
});

// The shared suggestion helper of the scenario loader, over the profile's keys.
std::string profile_key_hint(std::string_view unknown) {
  std::vector<std::string> keys;
  for (const ProfileField& field : kProfileFields) keys.emplace_back(field.key);
  return suggestion_hint(unknown, keys);
}

// "[1e-06, 1]", "0 or [1e-06, 1]", "[0, 1e+09], a whole number": the accepted values, as a hint prints them.
std::string range_text(const ProfileField& field) {
  std::string text = fmt::format("[{:g}, {:g}]", field.min, field.max);
  if (field.zero_too) text = "0 or " + text;
  if (field.kind == whole) text += ", a whole number";
  return text;
}

// What is wrong with `number` as a value of `field`, or nothing when it is accepted.
std::optional<std::string> value_problem(const ProfileField& field, double number,
                                         const std::string& written) {
  // Said apart from the range, since "1e-320 is out of range [0, 1]" would read as a contradiction.
  if (std::fpclassify(number) == FP_SUBNORMAL)
    return fmt::format(
        "value {} is subnormal (nearer to 0 than {:g}), too small for the cost model's arithmetic", written,
        std::numeric_limits<double>::min());
  const bool in_range = (number >= field.min && number <= field.max) || (field.zero_too && number == 0);
  if (!std::isfinite(number) || !in_range) return "value " + written + " is out of range";
  if (field.kind == whole && number != std::floor(number))
    return "value " + written + " is not a whole number";
  return std::nullopt;
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
    if (field->kind == flag) {
      if (!value.is_boolean()) {
        problems.add(at, "expected true or false, got " + std::string(value.type_name()),
                     "write \"" + std::string(field->key) + "\": false to turn it off");
        continue;
      }
      profile.*(field->member) = value.get<bool>() ? 1.0 : 0.0;
      continue;
    }
    if (!value.is_number()) {
      problems.add(at, "expected a number, got " + std::string(value.type_name()),
                   "write a plain number " + range_text(*field));
      continue;
    }
    const double number = value.get<double>();
    if (const std::optional<std::string> problem = value_problem(*field, number, value.dump())) {
      problems.add(at, *problem, "use a value in " + range_text(*field));
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

std::vector<HardwareProfileRange> hardware_profile_ranges() {
  std::vector<HardwareProfileRange> ranges;
  for (const ProfileField& f : kProfileFields)
    ranges.push_back({f.key, f.min, f.max, f.zero_too, f.kind == whole, f.kind == flag});
  return ranges;
}

HardwareProfileSpec load_hardware_profile_file(const std::string& file) {
  // Comments are allowed, as in scenarios: a measured profile wants a note of where each number came from.
  const nlohmann::json j = read_jsonc_file(file, max_hardware_profile_bytes);
  return {HardwareProfile::from_json(j, file), file};
}

nlohmann::json HardwareProfile::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const ProfileField& field : kProfileFields) {
    const double value = this->*(field.member);
    if (field.kind == flag) {
      j[std::string(field.key)] = value != 0;
    } else {
      j[std::string(field.key)] = value;
    }
  }
  return j;
}

}  // namespace zb
