#pragma once
// Cluster and model specs for the cost-model tests, written out by hand so that these tests do not depend
// on the scenario parser's presets. The figures match the preset list (and their public sources:
// Llama / Llama 3 configs on Hugging Face, NVIDIA DGX H200 and A800 data sheets).
#include "core/config/scenario.hpp"

namespace zb::test {

// Llama 2 7B: 32 layers, hidden 4096, 32 heads (MHA), SwiGLU FFN 11008, vocab 32000.
inline ModelSpec llama_7b() {
  ModelSpec m;
  m.preset = "llama-7b";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn_hidden = 11008;
  m.vocab = 32000;
  return m;
}

// Llama 3 8B: as above but GQA with 8 KV heads, FFN 14336, vocab 128256.
inline ModelSpec llama3_8b() {
  ModelSpec m = llama_7b();
  m.preset = "llama3-8b";
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.vocab = 128256;
  return m;
}

// Mixtral 8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): Llama-3-8B-like attention (GQA, 8 KV heads),
// 8 SwiGLU experts of 14336 per layer, top-2, vocab 32000. Released as 46.7B parameters, 12.9B active.
inline ModelSpec mixtral_8x7b() {
  ModelSpec m = llama3_8b();
  m.preset = "mixtral-8x7b";
  m.vocab = 32000;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 14336;
  return m;
}

// Qwen1.5-MoE-A2.7B (Qwen/Qwen1.5-MoE-A2.7B config.json): 24 layers, hidden 2048, 16 heads (MHA), 60
// experts of 1408, top-4, a shared expert of 5632 (4 × 1408), vocab 151936. Released as 14.3B parameters,
// 2.7B active.
inline ModelSpec qwen_moe_a2_7b() {
  ModelSpec m;
  m.preset = "qwen1.5-moe-a2.7b";
  m.layers = 24;
  m.hidden = 2048;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 5632;
  m.vocab = 151936;
  m.moe.experts = 60;
  m.moe.top_k = 4;
  m.moe.shared_experts = 4;
  m.moe.expert_ffn_hidden = 1408;
  return m;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// DGX H200: 8 × H200 (989 TFLOP/s dense bf16, 141 GiB as the scenario schema writes it), NVLink 450 GB/s
// per direction, 8 × 400 Gbit/s NICs, one per GPU.
inline ClusterSpec dgx_h200(int nodes) {
  ClusterSpec c;
  c.preset = "dgx-h200";
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.gpu = GpuSpec{.name = "H200", .peak_flops = 989e12, .memory_bytes = 141 * kGiB};
  c.nvlink = LinkSpec{.bandwidth = 450e9, .latency = 2e-6};
  c.nics_per_node = 8;
  c.nic = LinkSpec{.bandwidth = 400e9 / 8, .latency = 5e-6};
  c.gpu_to_nic = {0, 1, 2, 3, 4, 5, 6, 7};
  return c;
}

// A800 nodes with 4 × 200 Gbit/s NICs, two GPUs per NIC (the Zeppelin paper's cluster).
inline ClusterSpec a800_4nic(int nodes) {
  ClusterSpec c;
  c.preset = "a800-4nic";
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.gpu = GpuSpec{.name = "A800", .peak_flops = 312e12, .memory_bytes = 80 * kGiB};
  c.nvlink = LinkSpec{.bandwidth = 200e9, .latency = 2e-6};
  c.nics_per_node = 4;
  c.nic = LinkSpec{.bandwidth = 200e9 / 8, .latency = 5e-6};
  c.gpu_to_nic = {0, 0, 1, 1, 2, 2, 3, 3};
  return c;
}

}  // namespace zb::test
