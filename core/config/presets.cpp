#include "core/config/presets.hpp"

#include <utility>

#include "core/config/units.hpp"

namespace zb {
namespace {

// ---------------------------------------------------------------------------------------------------
// Cluster presets: one node each. Figures are written as in a scenario file and parsed by units.cpp, so
// the table reads like the datasheets it comes from.
//
// Sources:
//  [H100]  NVIDIA H100 Tensor Core GPU datasheet (SXM5): BF16 1,979 TFLOPS *with sparsity* → 989 dense;
//          80GB HBM3; NVLink 900 GB/s total (bidirectional) → 450 GB/s per direction; PCIe Gen5 x16.
//  [H200]  NVIDIA H200 Tensor Core GPU datasheet (SXM): BF16 1,979 TFLOPS with sparsity → 989 dense;
//          141GB HBM3e; NVLink 900 GB/s total → 450 GB/s per direction; PCIe Gen5 x16.
//  [H800]  NVIDIA H800 SXM5 (export variant of H100): same compute and memory as H100 SXM5, NVLink
//          reduced to 400 GB/s total → 200 GB/s per direction.
//  [A800]  NVIDIA A800 SXM4 80GB (export variant of A100): BF16 312 TFLOPS dense (A100 datasheet),
//          80GB HBM2e, NVLink 400 GB/s total → 200 GB/s per direction; PCIe Gen4 x16.
//  [DGX]   NVIDIA DGX H100/H200 user guide: 8 GPUs and 8 single-port ConnectX-7 400 Gb/s NICs for the
//          compute fabric, one per GPU, each behind the same PCIe switch as its GPU (gpu_to_nic identity).
//  [A800N] Common A800 HGX node build: 4 × 200 Gb/s HDR NICs, each shared by the 2 GPUs on its PCIe switch.
//  [PCIe]  PCIe Gen5 x16 ≈ 64 GB/s per direction; Gen4 x16 ≈ 32 GB/s per direction (PCI-SIG nominal).
//  [LAT]   Latencies are typical figures, not datasheet values: ~2 us for a small NVLink P2P transfer and
//          ~5 us for an RDMA message through one switch, as NCCL-tests small-message runs commonly show.
// HBM sizes sold as "80GB"/"141GB" are taken as GiB because HBM stacks come in binary sizes (an A100/A800
// 80GB shows 81920 MiB in nvidia-smi); the usable figure is lower still, and the cost model reserves a
// fraction for that.
// ---------------------------------------------------------------------------------------------------
struct ClusterRow {
  const char* name;
  const char* summary;
  const char* gpu_name;
  const char* peak_bf16;  // dense
  const char* memory;
  const char* nvlink_bandwidth;  // per GPU, per direction
  const char* nvlink_latency;
  int nics_per_node;
  const char* nic_bandwidth;  // per NIC, per direction
  const char* nic_latency;
  std::vector<int> gpu_to_nic;
  const char* pcie_bandwidth;
};

std::vector<ClusterRow> cluster_rows() {
  // clang-format off
  return {
      //  name         summary
      //  GPU     peak [H*/A800]  memory   NVLink/dir  lat [LAT]  NICs  NIC rate [DGX]  lat [LAT]
      {"dgx-h100", "NVIDIA DGX H100: 8 x H100 SXM5 80 GB, NVLink 4, 8 x 400 Gbit/s ConnectX-7",
       "H100", "989 TFLOP/s", "80 GiB", "450 GB/s", "2 us", 8, "400 Gbit/s", "5 us",
       {0, 1, 2, 3, 4, 5, 6, 7}, "64 GB/s"},
      {"dgx-h200", "NVIDIA DGX H200: 8 x H200 SXM 141 GB, NVLink 4, 8 x 400 Gbit/s ConnectX-7",
       "H200", "989 TFLOP/s", "141 GiB", "450 GB/s", "2 us", 8, "400 Gbit/s", "5 us",
       {0, 1, 2, 3, 4, 5, 6, 7}, "64 GB/s"},
      {"h800-8nic", "HGX H800: 8 x H800 SXM5 80 GB, NVLink 200 GB/s per direction, 8 x 400 Gbit/s",
       "H800", "989 TFLOP/s", "80 GiB", "200 GB/s", "2 us", 8, "400 Gbit/s", "5 us",
       {0, 1, 2, 3, 4, 5, 6, 7}, "64 GB/s"},
      {"a800-4nic", "HGX A800: 8 x A800 SXM4 80 GB, NVLink 200 GB/s per direction, 4 x 200 Gbit/s (2 GPUs per NIC)",
       "A800", "312 TFLOP/s", "80 GiB", "200 GB/s", "2 us", 4, "200 Gbit/s", "5 us",
       {0, 0, 1, 1, 2, 2, 3, 3}, "32 GB/s"},
  };
  // clang-format on
}

// ---------------------------------------------------------------------------------------------------
// Model presets. Every figure is from the model's Hugging Face config.json (num_hidden_layers,
// hidden_size, num_attention_heads, num_key_value_heads, intermediate_size, vocab_size):
//  llama-3b   openlm-research/open_llama_3b (OpenLLaMA 3B)
//  llama-7b   huggyllama/llama-7b  (LLaMA 1; Llama-2-7b-hf has the same shape)
//  llama-13b  huggyllama/llama-13b (LLaMA 1; Llama-2-13b-hf has the same shape)
//  llama-30b  huggyllama/llama-30b (LLaMA 1 "33B")
//  llama3-8b  meta-llama/Meta-Llama-3-8B (grouped-query attention: 8 KV heads)
// All train in bf16 here.
// ---------------------------------------------------------------------------------------------------
struct ModelRow {
  const char* name;
  const char* summary;
  int layers, hidden, heads, kv_heads, ffn_hidden, vocab;
};

// clang-format off
constexpr ModelRow model_rows[] = {
    //  name         summary                                   layers hidden heads kv  ffn    vocab
    {"llama-3b", "OpenLLaMA 3B (openlm-research/open_llama_3b)", 26, 3200, 32, 32, 8640, 32000},
    {"llama-7b", "LLaMA 7B (huggyllama/llama-7b)", 32, 4096, 32, 32, 11008, 32000},
    {"llama-13b", "LLaMA 13B (huggyllama/llama-13b)", 40, 5120, 40, 40, 13824, 32000},
    {"llama-30b", "LLaMA 30B (huggyllama/llama-30b)", 60, 6656, 52, 52, 17920, 32000},
    {"llama3-8b", "Llama 3 8B, GQA (meta-llama/Meta-Llama-3-8B)", 32, 4096, 32, 8, 14336, 128256},
};
// clang-format on

// ---------------------------------------------------------------------------------------------------
// Mixture-of-experts presets: the dense shape as above, then the MoE FFN that replaces the dense one in
// every layer. Sources (Hugging Face config.json unless said otherwise):
//  moe-8x550m         The Zeppelin paper's "8 x 550M" MoE. Its shape is not published, so this is a reading,
//                     in Mixtral's naming ("8x7B": a 7B dense model whose FFN becomes 8 experts): a 550M
//                     LLaMA-shaped dense model (16 layers, hidden 1536, 12 heads of 128, SwiGLU FFN 4096,
//                     LLaMA's 32000 vocabulary, untied embeddings: 551.3M parameters) with its FFN made 8
//                     experts of the same width, top-2 as Mixtral, no shared expert, dropless. 2.66B
//                     parameters in all, 0.85B active per token. docs/MOE.md gives the arithmetic.
//  mixtral-8x7b       mistralai/Mixtral-8x7B-v0.1: num_local_experts 8, num_experts_per_tok 2, every expert
//                     intermediate_size 14336 wide; no shared expert.
//  qwen1.5-moe-a2.7b  Qwen/Qwen1.5-MoE-A2.7B: num_experts 60, num_experts_per_tok 4, moe_intermediate_size
//                     1408; shared_expert_intermediate_size 5632 = 4 experts of 1408 (Qwen's release notes
//                     count 4 shared experts); ffn_hidden keeps the config's intermediate_size (5632), which
//                     no layer uses since every layer is sparse (decoder_sparse_step 1).
// Every one is dropless (no capacity factor), as Hugging Face's implementations and Megatron-Core's
// default; the router's load model keeps its defaults (scenario.hpp, RouterLoadSpec).
// ---------------------------------------------------------------------------------------------------
struct MoeModelRow {
  ModelRow dense;
  int experts, top_k, shared_experts, expert_ffn_hidden;
};

// clang-format off
constexpr MoeModelRow moe_model_rows[] = {
    //   name                 summary                                                  layers hidden heads kv  ffn   vocab
    //   experts top_k shared expert_ffn
    {{"moe-8x550m", "Zeppelin paper's 8 x 550M MoE, a reading (docs/MOE.md)", 16, 1536, 12, 12, 4096, 32000},
     8, 2, 0, 4096},
    {{"mixtral-8x7b", "Mixtral 8x7B, GQA (mistralai/Mixtral-8x7B-v0.1)", 32, 4096, 32, 8, 14336, 32000},
     8, 2, 0, 14336},
    {{"qwen1.5-moe-a2.7b", "Qwen1.5-MoE-A2.7B, fine-grained (Qwen/Qwen1.5-MoE-A2.7B)", 24, 2048, 16, 16, 5632, 151936},
     60, 4, 4, 1408},
};
// clang-format on

std::vector<ClusterPreset> build_cluster_presets() {
  std::vector<ClusterPreset> out;
  for (ClusterRow& row : cluster_rows()) {
    ClusterSpec spec;
    spec.preset = row.name;
    spec.nodes = 1;
    spec.gpus_per_node = static_cast<int>(row.gpu_to_nic.size());
    spec.gpu = GpuSpec{row.gpu_name, parse_compute(row.peak_bf16), parse_memory(row.memory)};
    spec.nvlink = LinkSpec{parse_bandwidth(row.nvlink_bandwidth), parse_latency(row.nvlink_latency)};
    spec.nics_per_node = row.nics_per_node;
    spec.nic = LinkSpec{parse_bandwidth(row.nic_bandwidth), parse_latency(row.nic_latency)};
    spec.gpu_to_nic = std::move(row.gpu_to_nic);
    spec.pcie_bandwidth = parse_bandwidth(row.pcie_bandwidth);
    spec.oversubscription = 1.0;  // a non-blocking rail-optimised fabric, as in the DGX reference design
    out.push_back(ClusterPreset{row.name, row.summary, std::move(spec)});
  }
  return out;
}

ModelSpec dense_spec(const ModelRow& row) {
  ModelSpec spec;
  spec.preset = row.name;
  spec.layers = row.layers;
  spec.hidden = row.hidden;
  spec.heads = row.heads;
  spec.kv_heads = row.kv_heads;
  spec.ffn_hidden = row.ffn_hidden;
  spec.vocab = row.vocab;
  spec.dtype = "bf16";
  spec.dtype_bytes = 2;
  return spec;
}

std::vector<ModelPreset> build_model_presets() {
  std::vector<ModelPreset> out;
  for (const ModelRow& row : model_rows) out.push_back(ModelPreset{row.name, row.summary, dense_spec(row)});
  for (const MoeModelRow& row : moe_model_rows) {
    ModelSpec spec = dense_spec(row.dense);
    spec.moe.experts = row.experts;
    spec.moe.top_k = row.top_k;
    spec.moe.shared_experts = row.shared_experts;
    spec.moe.expert_ffn_hidden = row.expert_ffn_hidden;
    out.push_back(ModelPreset{row.dense.name, row.dense.summary, std::move(spec)});
  }
  return out;
}

}  // namespace

const std::vector<ClusterPreset>& cluster_presets() {
  static const std::vector<ClusterPreset> presets = build_cluster_presets();
  return presets;
}

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = build_model_presets();
  return presets;
}

const ClusterPreset* find_cluster_preset(std::string_view name) {
  for (const ClusterPreset& p : cluster_presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const ModelPreset* find_model_preset(std::string_view name) {
  for (const ModelPreset& p : model_presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const ClusterPreset& p : cluster_presets()) names.push_back(p.name);
  return names;
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const ModelPreset& p : model_presets()) names.push_back(p.name);
  return names;
}

}  // namespace zb
