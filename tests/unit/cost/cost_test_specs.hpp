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
