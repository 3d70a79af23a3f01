// cudnn-frontend's validate() of every SDPA graph the executor can ask for, on Hopper (SM 90), WITHOUT a
// GPU: kernels/cuda_sdpa.hpp validate_sdpa_plan runs build()'s block split, grouping and graph
// construction and Graph::validate() with the SM version set explicitly (libcudnn only answers
// cudnnGetVersion). So a graph cuDNN's frontend refuses is found in CI, not on the one GPU run. These
// tests never skip: on a build with cuDNN they run on every machine, which is their point.
//
// What is enumerated, from how the executor asks (core/exec/cuda/verify_layout.cpp pack_blocks and
// rank_compute.cpp): every model preset's head_dim (hidden / heads); every per-rank head count that head
// or tensor parallelism can give (a divisor of the model's heads: Ulysses and TP refuse splits that do
// not divide them) with kv_heads = heads · model.kv_heads / model.heads, at least 1, as pack_blocks
// computes it; bf16 (what the executor runs) and f16; forward and backward; block lists laid out as
// pack_blocks lays them (each block its own Q, K/V and O rows, in list order) for packed batches of
// causal documents (batch 1 and many, a one-token document among them), context-parallel cuts (queries
// a late slice of a sequence, keys its whole prefix: s_q < s_kv), ring steps (a diagonal block, a full
// block of earlier keys, keys after the queries) and keys overhanging both ends. Those give
// bottom-right-causal and full graphs with s_q = s_kv and s_q != s_kv, batch 1 and many, and backward
// totals (total_q/total_kv) beyond the longest entry.
//
// Expected refusals are stated, not hidden:
//   - llama-3b has head_dim 100 (3200 / 32): not a multiple of 8, which cuDNN's SDPA needs (forward and
//     backward); SdpaPlan refuses it itself before cuDNN, and cuDNN's validate() refuses it too.
//   - a backward graph whose entries are all one query and one key (s_q = s_kv = 1) is refused by
//     cudnn-frontend ("s_q = s_kv = 1 is not supported"): a plan op whose only launched entries are
//     one-token documents cannot run its backward on cuDNN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/config/presets.hpp"
#include "kernels/cuda_sdpa.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"

namespace zb::kernels {
namespace {

constexpr int kHopper = 90;  // H100/H200, the target
using cuda::ElementType;

// One block as the planner describes it: absolute positions of its queries [q0, q1) and keys [k0, k1).
struct Block {
  std::int64_t q0, q1, k0, k1;
  AttentionMask mask = AttentionMask::causal;
};

struct Scenario {
  std::string name;
  std::vector<Block> blocks;
  bool one_by_one_only = false;  // every launched entry is 1 × 1: the backward is refused (see the top)
};

// Blocks laid out as core/exec/cuda/verify_layout.cpp pack_blocks does: rows in list order, O rows = Q rows.
struct Packed {
  AttentionShape shape;
  std::vector<AttentionBlockDesc> descs;
};
Packed pack(int heads, int kv_heads, int head_dim, const std::vector<Block>& blocks) {
  Packed p;
  p.shape.heads = heads;
  p.shape.kv_heads = kv_heads;
  p.shape.head_dim = head_dim;
  for (const Block& b : blocks) {
    AttentionBlockDesc d;
    d.q_row = p.shape.q_tokens;
    d.q_count = b.q1 - b.q0;
    d.kv_row = p.shape.kv_tokens;
    d.kv_count = b.k1 - b.k0;
    d.q_position = b.q0;
    d.kv_position = b.k0;
    d.mask = b.mask;
    d.out_row = d.q_row;
    p.descs.push_back(d);
    p.shape.q_tokens += d.q_count;
    p.shape.kv_tokens += d.kv_count;
  }
  p.shape.out_rows = p.shape.q_tokens;
  return p;
}

std::vector<Block> causal_documents(const std::vector<std::int64_t>& lengths) {
  std::vector<Block> blocks;
  for (std::int64_t n : lengths) blocks.push_back({0, n, 0, n});
  return blocks;
}

std::vector<Scenario> scenarios() {
  std::vector<std::int64_t> many;  // 64 documents of 1 … 512 tokens (a fixed sequence, no seed needed)
  for (std::int64_t i = 0; i < 64; ++i) many.push_back(1 + (i * 197 + 31) % 512);
  return {
      {"packed causal batch (with a one-token document)", causal_documents({77, 300, 129, 64, 200, 4096, 1})},
      {"one causal sequence of 64k tokens (batch 1)", causal_documents({65536})},
      {"one causal sequence of 1000 tokens (batch 1)", causal_documents({1000})},
      {"64 short documents", causal_documents(many)},
      // A context-parallel rank's queries [4096, 6144) of a sequence over its gathered keys [0, 6144),
      // and a zigzag pair: the first and the last chunk of an 8k sequence.
      {"context-parallel cut and zigzag pair",
       {{4096, 6144, 0, 6144}, {0, 1024, 0, 1024}, {7168, 8192, 0, 8192}}},
      // Ring attention: the diagonal step, a step whose keys all precede the queries (full), one whose
      // keys all follow them (empty), and a plan-level full block with s_q != s_kv.
      {"ring steps",
       {{1024, 2048, 1024, 2048},
        {1024, 2048, 0, 1024},
        {0, 1024, 2048, 3072},
        {0, 300, 0, 700, AttentionMask::full}}},
      // Keys that start after the first queries and end after the last: empty rows, then bottom-right.
      {"keys overhanging the queries", {{0, 300, 100, 400}, {500, 531, 400, 700}}},
      {"one-token documents only", causal_documents({1, 1, 1, 1, 1, 1, 1, 1}), true},
  };
}

// Per-rank head counts the executor can see for a model: the divisors of its heads (Ulysses and tensor
// parallelism refuse a degree that does not divide them), with kv_heads as pack_blocks derives it.
std::vector<std::pair<int, int>> rank_heads(const ModelSpec& model) {
  std::vector<std::pair<int, int>> out;
  for (int h = 1; h <= model.heads; ++h) {
    if (model.heads % h != 0) continue;
    out.emplace_back(h, std::max(1, h * model.kv_heads / std::max(1, model.heads)));
  }
  return out;
}

const char* type_name(ElementType t) {
  return t == ElementType::bf16 ? "bf16" : "f16";
}

TEST(CudnnSdpaValidate, EveryPresetGraphOnHopperWithoutAGpu) {
  ASSERT_FALSE(model_presets().empty());
  int validated_plans = 0, validated_graphs = 0, refused_as_expected = 0;
  for (const ModelPreset& preset : model_presets()) {
    const ModelSpec& model = preset.spec;
    const int d = model.head_dim();
    const bool cudnn_head_dim = d % 8 == 0 && d <= 256;  // cuDNN's Hopper rule (see the top)
    for (const auto& [heads, kv_heads] : rank_heads(model)) {
      for (ElementType type : {ElementType::bf16, ElementType::f16}) {
        for (bool backward : {false, true}) {
          for (const Scenario& s : scenarios()) {
            const Packed p = pack(heads, kv_heads, d, s.blocks);
            std::vector<std::string> graphs;
            const Status st =
                cuda::validate_sdpa_plan(p.shape, p.descs, type, backward, kHopper, {}, &graphs);
            const std::string what = preset.name + " d" + std::to_string(d) + " heads " +
                                     std::to_string(heads) + "/" + std::to_string(kv_heads) + " " +
                                     type_name(type) + (backward ? " backward " : " forward ") + s.name;
            if (!cudnn_head_dim) {
              // llama-3b: refused by the plan's own check, naming head_dim, before any cuDNN call.
              EXPECT_FALSE(st.ok()) << what;
              EXPECT_NE(st.message().find("head_dim = " + std::to_string(d)), std::string::npos)
                  << what << ": " << st.message();
              ++refused_as_expected;
              continue;
            }
            if (backward && s.one_by_one_only) {
              EXPECT_FALSE(st.ok()) << what;
              EXPECT_NE(st.message().find("s_q = s_kv = 1 is not supported"), std::string::npos)
                  << what << ": " << st.message();
              ++refused_as_expected;
              continue;
            }
            EXPECT_TRUE(st.ok()) << what << ": " << st.message();
            EXPECT_FALSE(graphs.empty()) << what;
            ++validated_plans;
            validated_graphs += static_cast<int>(graphs.size());
          }
        }
      }
    }
  }
  // The enumeration must not silently shrink (e.g. a preset list that stopped loading).
  EXPECT_GT(validated_plans, 500);
  EXPECT_GT(refused_as_expected, 0);
  RecordProperty("validated_plans", validated_plans);
  RecordProperty("validated_graphs", validated_graphs);
  std::printf("validated %d plans (%d cuDNN graphs) for SM %d; %d refusals as expected\n", validated_plans,
              validated_graphs, kHopper, refused_as_expected);
}

// The ring scenario gives both graph kinds; the product's other build options (the GPU check's
// bwd-variants) must validate too.
TEST(CudnnSdpaValidate, BuildOptionsAndGraphKinds) {
  const Scenario ring = scenarios()[5];
  ASSERT_EQ(ring.name, "ring steps");
  const Packed p = pack(32, 8, 128, ring.blocks);
  for (bool backward : {false, true}) {
    std::vector<std::string> graphs;
    ASSERT_TRUE(cuda::validate_sdpa_plan(p.shape, p.descs, ElementType::bf16, backward, kHopper, {}, &graphs))
        << (backward ? "backward" : "forward");
    ASSERT_EQ(graphs.size(), 2u);
    // The diagonal step is square: top-left (SdpaBuildOptions::square_top_left).
    EXPECT_NE(graphs[0].find("square causal (top-left)"), std::string::npos) << graphs[0];
    EXPECT_NE(graphs[1].find("full"), std::string::npos) << graphs[1];
  }
  const cuda::SdpaBuildOptions variants[] = {
      {false, false}, {true, true}, {false, true}, {true, false, true, true, false}};
  for (const cuda::SdpaBuildOptions& options : variants) {
    for (const Scenario& s : scenarios()) {
      const Packed q = pack(32, 8, 128, s.blocks);
      const Status st = cuda::validate_sdpa_plan(q.shape, q.descs, ElementType::bf16, true, kHopper, options);
      // One graph per entry gives a one-token document a 1 × 1 graph of its own, which the backward
      // refuses (see the top); grouped by kind (the product's default) it rides with longer entries.
      const bool has_one_by_one =
          std::ranges::any_of(s.blocks, [](const Block& b) { return b.q1 - b.q0 == 1; });
      const bool refused = s.one_by_one_only || (options.one_entry_per_graph && has_one_by_one);
      EXPECT_EQ(st.ok(), !refused) << s.name << " ragged_accumulators " << options.ragged_accumulators
                                   << " one_entry_per_graph " << options.one_entry_per_graph << ": "
                                   << st.message();
      if (refused) {
        EXPECT_NE(st.message().find("s_q = s_kv = 1 is not supported"), std::string::npos) << st.message();
      }
    }
  }
}

// Square causal entries launch top-left, in a graph of their own; non-square ones stay bottom-right; with
// square_top_left off every causal entry is bottom-right, as before the third H200 run.
TEST(CudnnSdpaValidate, SquareCausalEntriesLaunchTopLeft) {
  const Scenario cut = scenarios()[4];
  ASSERT_EQ(cut.name, "context-parallel cut and zigzag pair");
  const Packed p = pack(32, 8, 128, cut.blocks);
  for (bool backward : {false, true}) {
    std::vector<std::string> graphs;
    ASSERT_TRUE(
        cuda::validate_sdpa_plan(p.shape, p.descs, ElementType::bf16, backward, kHopper, {}, &graphs));
    ASSERT_EQ(graphs.size(), 2u);
    EXPECT_NE(graphs[0].find("square causal (top-left) batch 1 s_q 1024 s_kv 1024"), std::string::npos)
        << graphs[0];
    EXPECT_NE(graphs[1].find("bottom-right causal batch 2 s_q 2048 s_kv 8192"), std::string::npos)
        << graphs[1];
    cuda::SdpaBuildOptions before;
    before.square_top_left = false;
    graphs.clear();
    ASSERT_TRUE(
        cuda::validate_sdpa_plan(p.shape, p.descs, ElementType::bf16, backward, kHopper, before, &graphs));
    ASSERT_EQ(graphs.size(), 1u);
    EXPECT_NE(graphs[0].find("bottom-right causal batch 3"), std::string::npos) << graphs[0];
  }
}

// A plan whose only square entries are one-token documents keeps them bottom-right beside the longer
// entries: a top-left graph of 1 x 1 entries alone would be refused by cuDNN's backward.
TEST(CudnnSdpaValidate, OneTokenSquaresRideWithTheBottomRightEntries) {
  const Packed p = pack(32, 8, 128, {{0, 1, 0, 1}, {4096, 6144, 0, 6144}, {0, 1, 0, 1}});
  std::vector<std::string> graphs;
  const Status st = cuda::validate_sdpa_plan(p.shape, p.descs, ElementType::bf16, true, kHopper, {}, &graphs);
  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_NE(graphs[0].find("bottom-right causal batch 3"), std::string::npos) << graphs[0];
}

// Every case the GPU check runs (kernels/gpucheck/sdpa_cases.cpp), forward and backward, under every build
// option of `zb_gpucheck bwd-variants`: a refusal here would otherwise first show on the GPU as a FAIL.
TEST(CudnnSdpaValidate, GpuCheckCases) {
  const cuda::SdpaBuildOptions variants[] = {{true, false}, {false, false}, {true, true}, {false, true}};
  for (const gpucheck::SdpaCase& c : gpucheck::sdpa_standard_cases()) {
    const Status forward = cuda::validate_sdpa_plan(c.shape, c.blocks, c.type, false, kHopper);
    EXPECT_TRUE(forward.ok()) << c.name << ": " << forward.message();
    const auto& backward_blocks = c.backward_blocks.empty() ? c.blocks : c.backward_blocks;
    for (const cuda::SdpaBuildOptions& options : variants) {
      // One graph per entry gives the packed cases' one-token document a 1 × 1 backward graph (refused,
      // see the top); bwd-variants runs only the cut and ring cases, which have none.
      const bool one_token = std::ranges::any_of(
          backward_blocks, [](const AttentionBlockDesc& b) { return b.q_count == 1 && b.kv_count == 1; });
      const Status st = cuda::validate_sdpa_plan(c.shape, backward_blocks, c.type, true, kHopper, options);
      EXPECT_EQ(st.ok(), !(options.one_entry_per_graph && one_token))
          << c.name << " one_entry_per_graph " << options.one_entry_per_graph << ": " << st.message();
    }
  }
}

cuda::SdpaGraphSpec spec(int heads, int kv_heads, int head_dim, bool backward,
                         SdpaEntryKind kind = SdpaEntryKind::bottom_right_causal) {
  cuda::SdpaGraphSpec s;
  s.kind = kind;
  s.shape = {heads, kv_heads, head_dim, 4096, 4096, 4096};
  s.type = ElementType::bf16;
  s.backward = backward;
  s.batch = 4;
  s.max_q = 1024;
  s.max_kv = 2048;
  s.total_q = 4096;
  s.total_kv = 4096;
  return s;
}

// head_dim 100 (llama-3b) asked of cuDNN directly, past the plan's own check: cuDNN refuses it as well, so
// the plan's refusal is cuDNN's rule, not an over-strict one of ours.
TEST(CudnnSdpaValidate, CudnnRefusesHeadDim100) {
  const Status forward = cuda::validate_sdpa_graph(spec(32, 32, 100, false), kHopper);
  EXPECT_FALSE(forward.ok());
  EXPECT_NE(forward.message().find("hidden_dim should be multiple of 8"), std::string::npos)
      << forward.message();
  const Status backward = cuda::validate_sdpa_graph(spec(32, 32, 100, true), kHopper);
  EXPECT_FALSE(backward.ok());
  EXPECT_NE(backward.message().find("multiple of 8"), std::string::npos) << backward.message();
  // The nearest head dims cuDNN does take, for whoever changes the preset.
  for (int d : {96, 104, 128}) {
    EXPECT_TRUE(cuda::validate_sdpa_graph(spec(32, 32, d, false), kHopper)) << d;
    EXPECT_TRUE(cuda::validate_sdpa_graph(spec(32, 32, d, true), kHopper)) << d;
  }
}

// The check can fail: specs cuDNN must refuse are refused, and the SM version given is the one checked.
TEST(CudnnSdpaValidate, InvalidSpecsAreRefused) {
  ASSERT_TRUE(cuda::validate_sdpa_graph(spec(32, 8, 128, false), kHopper));
  ASSERT_TRUE(cuda::validate_sdpa_graph(spec(32, 8, 128, true, SdpaEntryKind::full), kHopper));
  // Query heads not a multiple of the K/V heads (GQA).
  const Status gqa = cuda::validate_sdpa_graph(spec(12, 5, 128, false), kHopper);
  EXPECT_FALSE(gqa.ok());
  EXPECT_NE(gqa.message().find("group-query attention"), std::string::npos) << gqa.message();
  // Head dims above 256: the Hopper backward refuses them. (cuDNN 9.19's forward validate() on SM 90 has
  // no upper bound, so SdpaPlan's own "above 256" refusal, kernels/sdpa_blocks.hpp, is what keeps the
  // forward and backward of one op consistent.)
  const Status wide = cuda::validate_sdpa_graph(spec(8, 8, 264, true), kHopper);
  EXPECT_FALSE(wide.ok());
  EXPECT_NE(wide.message().find("less than or equal to 256"), std::string::npos) << wide.message();
  // The same valid graph for a Turing GPU (SM 75): cuDNN's SDPA needs SM 80, so validate() read the SM
  // version we set (no device here to read one from).
  const Status turing = cuda::validate_sdpa_graph(spec(32, 8, 128, false), 75);
  EXPECT_FALSE(turing.ok());
  EXPECT_NE(turing.message().find("SM80"), std::string::npos) << turing.message();
  // The backward with s_q = s_kv = 1 (see the top).
  cuda::SdpaGraphSpec one = spec(32, 8, 128, true);
  one.max_q = one.max_kv = 1;
  const Status tiny = cuda::validate_sdpa_graph(one, kHopper);
  EXPECT_FALSE(tiny.ok());
  EXPECT_NE(tiny.message().find("s_q = s_kv = 1"), std::string::npos) << tiny.message();
  // The plan's own argument errors come first and name the argument.
  const Packed p = pack(32, 8, 128, causal_documents({100}));
  EXPECT_NE(cuda::validate_sdpa_plan(p.shape, p.descs, ElementType::f32, false, kHopper)
                .message()
                .find("bf16 or f16"),
            std::string::npos);
}

}  // namespace
}  // namespace zb::kernels
