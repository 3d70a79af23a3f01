#pragma once
// The Scenario: the validated, typed form of a scenario file (docs/SCENARIOS.md). Everything downstream
// (workload, strategies, executors, reports) reads these structs and never the raw JSON. All quantities
// are stored in SI base units: bytes, bytes/s, seconds, FLOP/s.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/hardware_profile.hpp"

namespace zb {

struct GpuSpec {
  std::string name;
  double peak_flops = 0;        // dense bf16 FLOP/s
  double memory_bytes = 0;      // HBM capacity
  double memory_bandwidth = 0;  // HBM bytes/s; 0: core/cost's datasheet table, by name
};

struct LinkSpec {
  double bandwidth = 0;  // bytes/s, per direction
  double latency = 0;    // seconds
};

struct ClusterSpec {
  std::string preset;  // empty when none was named
  int nodes = 1;
  int gpus_per_node = 8;
  GpuSpec gpu;
  LinkSpec nvlink;  // per GPU, per direction
  int nics_per_node = 8;
  LinkSpec nic;                          // per NIC, per direction
  std::vector<int> gpu_to_nic;           // NIC index of each local GPU (size gpus_per_node)
  std::optional<double> pcie_bandwidth;  // GPU↔NIC link, bytes/s; none = not modelled
  double oversubscription = 1.0;         // network core, ≥ 1

  [[nodiscard]] int world_size() const { return nodes * gpus_per_node; }
  [[nodiscard]] int node_of(int rank) const { return rank / gpus_per_node; }
  [[nodiscard]] int local_of(int rank) const { return rank % gpus_per_node; }
  [[nodiscard]] int nic_of(int rank) const { return gpu_to_nic.at(static_cast<std::size_t>(local_of(rank))); }
  // Global NIC id: node * nics_per_node + local NIC index.
  [[nodiscard]] int global_nic_of(int rank) const { return node_of(rank) * nics_per_node + nic_of(rank); }
};

// The router's load model (docs/MOE.md, "The router load model"): how unevenly the experts are chosen. It
// is an assumption about the trained router and the data, not a fit; core/workload/moe_router draws from it.
struct RouterLoadSpec {
  double skew = 0.2;                  // Zipf exponent of the experts' popularity; 0: every expert alike
  double document_correlation = 0.2;  // share of a document's choices that go to its own favourite experts
  double layer_drift = 1.0;           // 0: the same popular experts in every layer; 1: independent per layer
};

// A mixture-of-experts FFN in every layer (docs/SCENARIOS.md, "model.moe"). experts == 0 is a dense model,
// the default: every other field is then unused.
struct MoeSpec {
  int experts = 0;                        // routed experts per layer
  int top_k = 0;                          // routed experts per token
  int shared_experts = 0;                 // experts every token also passes through (Qwen-MoE, DeepSeek)
  int expert_ffn_hidden = 0;              // FFN width of one expert, routed or shared
  std::optional<double> capacity_factor;  // tokens an expert takes, × its fair share; none: dropless
  RouterLoadSpec routing;
};

struct ModelSpec {
  std::string preset;  // empty when none was named
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int ffn_hidden = 0;
  int vocab = 0;
  std::string dtype = "bf16";  // bf16 | fp16 | fp32
  int dtype_bytes = 2;
  MoeSpec moe;  // dense unless moe.experts > 0

  [[nodiscard]] bool has_experts() const { return moe.experts > 0; }
  // The FFN width one token passes through: a dense model's ffn_hidden, or an MoE layer's top-k routed
  // experts and its shared ones side by side, as their FLOPs and elementwise bytes count (docs/MOE.md,
  // "The MoE layer in the cost model").
  [[nodiscard]] std::int64_t token_ffn_width() const {
    if (!has_experts()) return ffn_hidden;
    return static_cast<std::int64_t>(moe.top_k + moe.shared_experts) * moe.expert_ffn_hidden;
  }
  [[nodiscard]] int head_dim() const { return hidden / heads; }
  [[nodiscard]] int kv_hidden() const { return kv_heads * head_dim(); }
};

// Parametric length distribution: a lognormal body with an optional Pareto tail spliced at a quantile.
struct DistributionSpec {
  std::string kind = "lognormal";    // lognormal | uniform | fixed
  double median = 512;               // lognormal: exp(mu)
  double sigma = 1.0;                // lognormal: sd of ln(length)
  std::optional<double> tail_alpha;  // Pareto index of the tail; none = no tail
  double tail_from = 0.95;           // quantile of the body where the tail starts
  std::int64_t min = 1;              // uniform: lower bound; fixed: ignored
  std::int64_t max = 0;              // uniform: upper bound
  std::int64_t value = 0;            // fixed: every document has this length
};

enum class LongDocuments { truncate, split, keep };
enum class WorkloadSource { dataset, distribution, lengths_file };

struct WorkloadSpec {
  WorkloadSource source = WorkloadSource::dataset;
  std::string dataset;                 // preset name when source == dataset
  DistributionSpec distribution;       // when source == distribution
  std::filesystem::path lengths_file;  // absolute, resolved against the scenario file's folder
  std::int64_t max_seq_len = 65536;
  LongDocuments long_documents = LongDocuments::truncate;
  std::int64_t tokens_per_iteration = 1048576;
  int iterations = 3;
};

// One entry of "systems". `options` holds every option of the strategy with defaults filled in, as JSON,
// so each strategy reads its own typed options (the catalog in system_catalog.hpp lists them).
struct SystemSpec {
  std::string name;   // strategy name: zeppelin, ring-cp, uniform-cp, ...
  std::string label;  // unique within the scenario
  nlohmann::json options = nlohmann::json::object();
};

// How each model replica is split across GPUs besides the strategies' own CP/DP (docs/SCENARIOS.md,
// "parallelism"). Tensor parallelism is Megatron's with sequence parallelism: t consecutive GPUs of a node
// form one TP group, which every strategy sees as one rank of a world of N/t (docs/STRATEGIES.md).
// Expert parallelism (MoE models only) follows Megatron-Core's MoE parallel folding with the experts' TP
// equal to the attention's: the N/t TP-group ranks that the strategies plan on are regrouped, for the MoE
// layers only, into expert groups of e consecutive ranks, each holding experts/e experts (docs/MOE.md).
struct ParallelismSpec {
  int tensor = 1;
  int expert = 1;
};

// The backends this repository builds in, for code that names one of them (tests; the simulation ratio's
// simulator): make_executor(Backend) asks the registry by to_string's name. A scenario holds any
// registered backend's name (Scenario::backend), not this closed set.
enum class Backend { sim, reference, cuda };
enum class Passes { fwd, fwd_bwd };

struct OutputSpec {
  std::filesystem::path dir;         // resolved against the current directory
  std::vector<std::string> formats;  // json | html | trace | gbench
};

struct GateSpec {
  std::string metric;    // see docs/SCENARIOS.md for the list
  std::string system;    // a label
  std::string baseline;  // a label; empty for absolute metrics
  std::optional<double> min;
  std::optional<double> max;
};

struct Scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  ClusterSpec cluster;
  ModelSpec model;
  WorkloadSpec workload;
  ParallelismSpec parallelism;
  HardwareProfileSpec
      hardware_profile;  // the cost model's constants (defaults unless the scenario names one)
  std::vector<SystemSpec> systems;
  // A registered backend's name (core/exec/backend_registry.hpp; the loader checks it against
  // core/config/backend_names.hpp): "sim", "reference", "cuda", or one added since.
  std::string backend = "sim";
  Passes passes = Passes::fwd_bwd;
  // The relative error of every planner's cost terms (CostModel's PlannerError; 0 = the exact model).
  double planner_error = 0;
  OutputSpec output;
  std::vector<GateSpec> gates;

  std::filesystem::path source_file;  // where it was read from (empty when built in code)
  nlohmann::json source_json;         // the scenario as written (comments stripped), for the report
};

[[nodiscard]] const char* to_string(Backend b);
[[nodiscard]] const char* to_string(Passes p);
[[nodiscard]] const char* to_string(LongDocuments d);

}  // namespace zb
