#include "core/config/presets.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace zb {
namespace {

constexpr double GiB = 1073741824.0;

TEST(ClusterPresets, DgxH200MatchesTheDatasheet) {
  const ClusterPreset* preset = find_cluster_preset("dgx-h200");
  ASSERT_NE(preset, nullptr);
  const ClusterSpec& c = preset->spec;
  EXPECT_EQ(c.preset, "dgx-h200");
  EXPECT_EQ(c.nodes, 1);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.gpu.name, "H200");
  EXPECT_DOUBLE_EQ(c.gpu.peak_flops, 989e12);
  EXPECT_DOUBLE_EQ(c.gpu.memory_bytes, 141 * GiB);
  EXPECT_DOUBLE_EQ(c.nvlink.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(c.nvlink.latency, 2e-6);
  EXPECT_EQ(c.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(c.nic.bandwidth, 50e9);  // 400 Gbit/s
  EXPECT_DOUBLE_EQ(c.nic.latency, 5e-6);
  EXPECT_EQ(c.gpu_to_nic, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(c.oversubscription, 1.0);
}

TEST(ClusterPresets, DgxH100) {
  const ClusterSpec& c = find_cluster_preset("dgx-h100")->spec;
  EXPECT_EQ(c.gpu.name, "H100");
  EXPECT_DOUBLE_EQ(c.gpu.peak_flops, 989e12);
  EXPECT_DOUBLE_EQ(c.gpu.memory_bytes, 80 * GiB);
  EXPECT_DOUBLE_EQ(c.nvlink.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(c.nic.bandwidth, 50e9);
}

TEST(ClusterPresets, H800HasReducedNvlink) {
  const ClusterSpec& c = find_cluster_preset("h800-8nic")->spec;
  EXPECT_EQ(c.gpu.name, "H800");
  EXPECT_DOUBLE_EQ(c.nvlink.bandwidth, 200e9);
  EXPECT_EQ(c.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(c.nic.bandwidth, 50e9);
}

TEST(ClusterPresets, A800SharesEachNicBetweenTwoGpus) {
  const ClusterSpec& c = find_cluster_preset("a800-4nic")->spec;
  EXPECT_EQ(c.gpu.name, "A800");
  EXPECT_DOUBLE_EQ(c.gpu.peak_flops, 312e12);
  EXPECT_DOUBLE_EQ(c.gpu.memory_bytes, 80 * GiB);
  EXPECT_DOUBLE_EQ(c.nvlink.bandwidth, 200e9);
  EXPECT_EQ(c.nics_per_node, 4);
  EXPECT_DOUBLE_EQ(c.nic.bandwidth, 25e9);  // 200 Gbit/s
  EXPECT_EQ(c.gpu_to_nic, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(ClusterPresets, EveryPresetIsConsistent) {
  EXPECT_EQ(cluster_preset_names(),
            (std::vector<std::string>{"dgx-h100", "dgx-h200", "h800-8nic", "a800-4nic"}));
  for (const ClusterPreset& p : cluster_presets()) {
    SCOPED_TRACE(p.name);
    ASSERT_EQ(p.spec.gpu_to_nic.size(), static_cast<std::size_t>(p.spec.gpus_per_node));
    for (int nic : p.spec.gpu_to_nic) {
      EXPECT_GE(nic, 0);
      EXPECT_LT(nic, p.spec.nics_per_node);
    }
    EXPECT_FALSE(p.summary.empty());
    EXPECT_TRUE(p.spec.pcie_bandwidth.has_value());
  }
  EXPECT_EQ(find_cluster_preset("dgx-h300"), nullptr);
}

struct ModelShape {
  const char* name;
  int layers, hidden, heads, kv_heads, ffn, vocab;
};

TEST(ModelPresets, ShapesMatchTheHuggingFaceConfigs) {
  const ModelShape expected[] = {
      {"llama-3b", 26, 3200, 32, 32, 8640, 32000},   {"llama-7b", 32, 4096, 32, 32, 11008, 32000},
      {"llama-13b", 40, 5120, 40, 40, 13824, 32000}, {"llama-30b", 60, 6656, 52, 52, 17920, 32000},
      {"llama3-8b", 32, 4096, 32, 8, 14336, 128256},
  };
  // The dense presets; the mixture-of-experts ones follow them (moe_scenario_test.cpp).
  ASSERT_EQ(std::count_if(model_presets().begin(), model_presets().end(),
                          [](const ModelPreset& p) { return !p.spec.has_experts(); }),
            std::ssize(expected));
  for (const ModelShape& shape : expected) {
    SCOPED_TRACE(shape.name);
    const ModelPreset* preset = find_model_preset(shape.name);
    ASSERT_NE(preset, nullptr);
    const ModelSpec& m = preset->spec;
    EXPECT_EQ(m.preset, shape.name);
    EXPECT_EQ(m.layers, shape.layers);
    EXPECT_EQ(m.hidden, shape.hidden);
    EXPECT_EQ(m.heads, shape.heads);
    EXPECT_EQ(m.kv_heads, shape.kv_heads);
    EXPECT_EQ(m.ffn_hidden, shape.ffn);
    EXPECT_EQ(m.vocab, shape.vocab);
    EXPECT_EQ(m.dtype, "bf16");
    EXPECT_EQ(m.dtype_bytes, 2);
    EXPECT_EQ(m.hidden % m.heads, 0);
    EXPECT_EQ(m.heads % m.kv_heads, 0);
  }
  EXPECT_EQ(find_model_preset("llama3-8b")->spec.head_dim(), 128);
  EXPECT_EQ(find_model_preset("llama3-8b")->spec.kv_hidden(), 1024);
  EXPECT_EQ(find_model_preset("llama-3b")->spec.head_dim(), 100);
  EXPECT_EQ(find_model_preset("gpt-5"), nullptr);
}

}  // namespace
}  // namespace zb
