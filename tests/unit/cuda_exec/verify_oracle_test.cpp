// The correctness pass's float64 oracle (core/exec/cuda/verify_oracle.hpp), with the CPU float32 kernels
// standing where the GPU runs in a real pass: they compute from exactly the operands the pass writes, so
// outputs within tolerance pass, and an output computed from one wrong K row (what a message that brought
// the wrong rows gives) or one wrong gradient element fails, naming the tensor and the element.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/exec/cuda/verify_oracle.hpp"
#include "kernels/attention_backward.hpp"
#include "kernels/half.hpp"

namespace zb::cuda {
namespace {

const AttentionDims kDims{4, 2, 8};

// Sequence 0's queries [32, 64) against keys [0, 32) (full) and [32, 64) (causal): two ring steps of one
// instruction, the first block's keys from a message.
AttentionOperands two_blocks(bool backward) {
  AttentionOperands a;
  a.backward = backward;
  a.packed.shape = {kDims.heads, kDims.kv_heads, kDims.head_dim, 64, 64, 64};
  a.packed.blocks = {{0, 32, 64, 0, 32, layout::Mask::full, {}},
                     {0, 32, 64, 32, 64, layout::Mask::causal, {}}};
  a.packed.descs = {{0, 32, 0, 32, 32, 0, kernels::AttentionMask::full, 0},
                    {32, 32, 32, 32, 32, 32, kernels::AttentionMask::causal, 32}};
  a.k = {{5, 0, 0, 32, 0, 0}, {-1, 0, 32, 32, 32, 0}};
  a.v = a.k;
  return a;
}

std::vector<float> floats(const std::vector<std::uint16_t>& bits) {
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = kernels::bf16_bits_to_float(bits[i]);
  return out;
}

std::vector<std::uint16_t> bf16(const std::vector<float>& values) {
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = kernels::float_to_bf16_bits(values[i]);
  return out;
}

// The operands as the pass leaves them once the message's rows are copied in: K/V rows of message runs
// from `k_rows` (the generator's, or wrong ones).
HostOperands after_copies(const AttentionOperands& a, const QkvGenerator& g, std::uint16_t k_poison = 0) {
  HostOperands h = host_operands(a, g);
  lower::Message m;
  m.slices = lower::SliceList({{lower::Tensor::K, 0, 0, 32, {}}, {lower::Tensor::V, 0, 0, 32, {}}});
  const std::vector<std::uint16_t> payload = generated_payload(m, kDims, g);
  const std::size_t half = payload.size() / 2;
  std::copy(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(half), h.k.begin());
  std::copy(payload.begin() + static_cast<std::ptrdiff_t>(half), payload.end(), h.v.begin());
  if (k_poison != 0) h.k[3 * kDims.kv_width()] = k_poison;  // key row 3 of the message arrived wrong
  return h;
}

DeviceResults forward_on_cpu(const AttentionOperands& a, const HostOperands& h) {
  const auto& s = a.packed.shape;
  std::vector<float> o(h.q.size()), lse(static_cast<std::size_t>(s.out_rows * s.heads));
  EXPECT_TRUE(
      kernels::attention_forward(s, a.packed.descs, floats(h.q), floats(h.k), floats(h.v), o, lse).ok());
  return {bf16(o), lse, {}, {}, {}};
}

TEST(VerifyOracle, ForwardOutputsOfTheRightRowsPass) {
  const QkvGenerator g(11, kDims);
  const AttentionOperands a = two_blocks(false);
  const HostOperands h = after_copies(a, g);
  const InstrCheck check = check_attention(a, h, forward_on_cpu(a, h), g, false, "rank 0 instr 4");
  EXPECT_EQ(check.failure, "");
  EXPECT_EQ(check.elements, 64 * 32 + 64 * 4);
  EXPECT_LE(check.worst_ratio, 1.0);
}

TEST(VerifyOracle, OneWrongReceivedKeyRowFailsAndNamesTheOutput) {
  const QkvGenerator g(11, kDims);
  const AttentionOperands a = two_blocks(false);
  const HostOperands wrong = after_copies(a, g, kernels::float_to_bf16_bits(3.0F));
  const InstrCheck check = check_attention(a, wrong, forward_on_cpu(a, wrong), g, false, "rank 0 instr 4");
  EXPECT_NE(check.failure.find("rank 0 instr 4: "), std::string::npos) << check.failure;
  EXPECT_NE(check.failure.find("tolerance"), std::string::npos) << check.failure;
  EXPECT_GT(check.worst_ratio, 1.0);
}

TEST(VerifyOracle, OwnRowsAreWrittenAndMessageRowsAreLeftForThePass) {
  const QkvGenerator g(11, kDims);
  const HostOperands h = host_operands(two_blocks(false), g);
  const auto width = static_cast<std::size_t>(kDims.kv_width());
  for (std::size_t i = 0; i < 32 * width; ++i)
    ASSERT_EQ(h.k[i], 0) << "row " << i / width << " comes from the message";
  EXPECT_NE(h.k[32 * width], 0);  // own key 32
  EXPECT_TRUE(h.o.empty());       // a forward writes no saved activations
}

TEST(VerifyOracle, BackwardGradientsPassAndOneWrongElementFails) {
  const QkvGenerator g(11, kDims);
  const AttentionOperands a = two_blocks(true);
  const HostOperands h = after_copies(a, g);
  ASSERT_EQ(h.lse.size(), 64u * 4u);
  EXPECT_TRUE(std::isfinite(h.lse[0]));
  std::vector<float> dq(h.q.size(), 0.0F), dk(h.k.size(), 0.0F), dv(h.v.size(), 0.0F);
  ASSERT_TRUE(kernels::attention_backward(a.packed.shape, a.packed.descs, floats(h.q), floats(h.k),
                                          floats(h.v), floats(h.o), floats(h.d_o), h.lse, dq, dk, dv)
                  .ok());
  DeviceResults results{{}, {}, bf16(dq), bf16(dk), bf16(dv)};
  InstrCheck check = check_attention(a, h, results, g, true, "rank 1 instr 9");
  EXPECT_EQ(check.failure, "");
  EXPECT_EQ(check.elements, 64 * 32 + 2 * 64 * 16);
  results.dk[17] = kernels::float_to_bf16_bits(kernels::bf16_bits_to_float(results.dk[17]) + 1.0F);
  check = check_attention(a, h, results, g, true, "rank 1 instr 9");
  EXPECT_NE(check.failure.find("rank 1 instr 9: worst dK[17] (row 1, element 1)"), std::string::npos)
      << check.failure;
}

}  // namespace
}  // namespace zb::cuda
