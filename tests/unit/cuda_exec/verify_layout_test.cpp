// The correctness pass's data layout (core/exec/cuda/verify_layout.hpp), replayed on the host without a
// GPU: for every registered strategy on random clusters and batches whose programs the pass can check,
// each rank writes the payloads it generates, every transfer of the global NCCL order moves its leg's
// payload fragment from the buffer the sender uses (its generated payload, or the received buffer it
// forwards) into the receiver's buffer, and then every K and V row each attention instruction copies out
// of a received buffer must be, bit for bit, the generator's row the plan says the block sees.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "core/common/rng.hpp"
#include "core/exec/cuda/nccl_order.hpp"
#include "core/exec/cuda/verify_layout.hpp"
#include "core/exec/cuda/verify_oracle.hpp"
#include "core/lower/lower.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/strategies/support.hpp"

namespace zb::cuda {
namespace {

using Bytes = std::vector<char>;

Bytes as_bytes(const std::vector<std::uint16_t>& bits) {
  Bytes b(bits.size() * 2);
  if (!bits.empty()) std::memcpy(b.data(), bits.data(), b.size());
  return b;
}

// Every rank's buffers after the pass's transfers: (rank, message) → payload bytes.
class HostReplay {
 public:
  HostReplay(const lower::Program& program, const AttentionDims& dims, const QkvGenerator& generator)
      : program_(program), dims_(dims) {
    for (int r = 0; r < program.world_size; ++r) {
      layouts_.push_back(derive_verify_layout(program, r, dims));
      for (const int m : layouts_.back().generated)
        written_[{r, m}] =
            as_bytes(generated_payload(program.messages[static_cast<std::size_t>(m)], dims, generator));
    }
    const GlobalOrder order = derive_order(program);
    for (const CommStep& step : order.steps) {
      for (const auto& [src, id] : step.sends) move_leg(src, id);
      if (step.collective < 0) continue;
      for (const int m : program.collectives[static_cast<std::size_t>(step.collective)].messages) {
        const lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
        received_[{msg.dst, m}] = written_.at({msg.src, m});
      }
    }
  }

  [[nodiscard]] const VerifyLayout& layout(int rank) const {
    return layouts_[static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] const Bytes& received(int rank, int message) const { return received_.at({rank, message}); }

 private:
  void move_leg(int src, int id) {
    const lower::Instr& send = program_.instr(src, id);
    const lower::Message& m = program_.messages[static_cast<std::size_t>(send.message)];
    const int forwarded = layout(src).forwards[static_cast<std::size_t>(send.message)];
    const Bytes& from = forwarded >= 0 ? received_.at({src, forwarded}) : written_.at({src, send.message});
    const lower::ByteRange range =
        lower::payload_fragment(m, payload_of(m, dims_).bytes, send.offset, send.bytes);
    Bytes& into = received_[{send.peer, send.message}];
    into.resize(from.size());
    std::copy(from.begin() + range.begin, from.begin() + range.end, into.begin() + range.begin);
  }

  const lower::Program& program_;
  AttentionDims dims_;
  std::vector<VerifyLayout> layouts_;
  std::map<std::pair<int, int>, Bytes> written_, received_;
};

TEST(VerifyLayout, EveryKvRowAKernelCopiesFromAReceivedBufferIsTheRowItsBlockSees) {
  // Narrow rows (the generator fills every payload of every program): the layout's arithmetic is the
  // same at any width.
  const AttentionDims dims{2, 1, 2};
  const QkvGenerator generator(7, dims);
  int checked = 0, rows_from_messages = 0;
  for (int seed = 0; seed < 8; ++seed) {
    Rng rng(static_cast<std::uint64_t>(seed), 43);
    const test::LoweringCase c = test::random_lowering_case(rng);
    const CostModel cost(c.scenario.cluster, c.scenario.model);
    for (const SystemSpec& system : test::registered_variants(c.scenario.cluster.world_size(), {1})) {
      const plan::Plan p = make_strategy(system, c.scenario, cost)->make_plan(test::batch_of(c.lengths));
      if (!p.feasible()) continue;
      const lower::Program program = lower::lower(p, cost, {.backward = true});
      if (!verification_blocker(program, dims).empty()) continue;
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + system.label);
      const HostReplay replay(program, dims, generator);
      for (int r = 0; r < program.world_size; ++r) {
        ASSERT_EQ(replay.layout(r).problem, "");
        for (const AttentionOperands& a : replay.layout(r).attention) {
          for (std::size_t b = 0; b < a.packed.blocks.size(); ++b) {
            const plan::AttentionBlock& block = a.packed.blocks[b];
            for (const auto* runs : {&a.k, &a.v}) {
              std::int64_t covered = 0;
              for (const OperandRun& run : *runs) {
                if (run.packed_row < a.packed.descs[b].kv_row ||
                    run.packed_row >= a.packed.descs[b].kv_row + a.packed.descs[b].kv_count)
                  continue;
                covered += run.rows;
                EXPECT_EQ(run.token - block.k0, run.packed_row - a.packed.descs[b].kv_row);
                if (run.message < 0) continue;
                lower::Message one;
                one.slices = lower::SliceList({{runs == &a.k ? lower::Tensor::K : lower::Tensor::V,
                                                run.seq,
                                                run.token,
                                                run.token + run.rows,
                                                {}}});
                const Bytes expected = as_bytes(generated_payload(one, dims, generator));
                const Bytes& buffer = replay.received(r, run.message);
                ASSERT_LE(run.source_byte + static_cast<std::int64_t>(expected.size()),
                          static_cast<std::int64_t>(buffer.size()));
                EXPECT_TRUE(std::equal(expected.begin(), expected.end(), buffer.begin() + run.source_byte))
                    << lower::describe(program, r, a.instr) << " reads wrong bytes of message "
                    << run.message;
                rows_from_messages += static_cast<int>(run.rows);
              }
              EXPECT_EQ(covered, block.k1 - block.k0) << lower::describe(program, r, a.instr);
            }
          }
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
  EXPECT_GT(rows_from_messages, 1000);  // the replay did exercise received buffers, not only own rows
}

TEST(VerifyLayout, AKvRowNoSourceHoldsIsNamed) {
  // Rank 1 of a two-rank ring whose K/V message from rank 0 is not among what its attention reads.
  const AttentionDims dims{4, 2, 4};
  Rng rng(3, 43);
  test::LoweringCase c = test::random_lowering_case(rng);
  c.scenario.cluster.nodes = 1;
  c.scenario.cluster.gpus_per_node = 2;
  const CostModel cost(c.scenario.cluster, c.scenario.model);
  const plan::Plan p =
      make_strategy(test::system("ring-cp"), c.scenario, cost)->make_plan(test::batch_of({4096}));
  ASSERT_TRUE(p.feasible());
  lower::Program program = lower::lower(p, cost, {});
  bool cut = false;
  for (lower::Instr& in : program.ranks[1].instrs)
    if (in.kind == lower::InstrKind::attention && !in.reads.empty()) in.reads = lower::IdList{}, cut = true;
  ASSERT_TRUE(cut);
  const std::string problem = derive_verify_layout(program, 1, dims).problem;
  EXPECT_NE(problem.find("rank 1"), std::string::npos) << problem;
  EXPECT_NE(problem.find("is neither this rank's own nor in a message it receives and reads"),
            std::string::npos)
      << problem;
}

}  // namespace
}  // namespace zb::cuda
