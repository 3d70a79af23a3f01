// Broken backward programs, run anyway on the reference backend: each is caught by the gradient check
// (or by the rank that cannot proceed), naming the rank and the tensor. The Programs are well-formed
// forward; only their backward is corrupted, as a faulty lowering or executor would.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

using Prepared = test::PreparedPlan;

Prepared ring_plan() {
  return test::ring_plan(Passes::fwd_bwd);
}
Prepared remapping_plan() {
  return test::remapping_plan(Passes::fwd_bwd);
}

// Runs `program` on the reference backend; the error text, empty when it passed. Every corruption here
// is caught without a stall (by the rank that cannot proceed, or by the gradient check), so the receive
// timeout is long: a rank starved of CPU (16 threads on a loaded, sanitised 2-core machine) can wait well
// over a second at a barrier, and a short timeout would report that as a stall instead of the corruption.
std::string run_program(const Prepared& p, const lower::Program& program) {
  reference::ReferenceOptions options = test::in_process_options();
  options.receive_timeout = std::chrono::seconds(30);
  reference::ReferenceExecutor executor(options);
  try {
    (void)executor.run(program, exec_context(p.scenario, p.cost));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    ::testing::Test::RecordProperty("error", e.what());  // the message as a user sees it, in the XML report
    return e.what();
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The accumulator message that brings rank `owner`'s finished dK/dV home (the end of its chain).
int home_accumulator(const lower::Program& program, int owner) {
  for (std::size_t m = 0; m < program.messages.size(); ++m) {
    const lower::Message& msg = program.messages[m];
    if (msg.purpose == lower::Purpose::dkv && msg.dst == owner && msg.kv_owner == owner)
      return static_cast<int>(m);
  }
  return -1;
}

// The instructions (rank, id) that move message `m`.
std::vector<std::pair<int, int>> legs_of(const lower::Program& program, int m) {
  std::vector<std::pair<int, int>> out;
  for (const lower::RankProgram& rp : program.ranks)
    for (std::size_t i = 0; i < rp.instrs.size(); ++i)
      if (rp.instrs[i].message == m) out.emplace_back(rp.rank, static_cast<int>(i));
  return out;
}

// An instruction that does nothing: done once its deps are (it keeps them, so nothing else changes).
void make_wait(lower::Instr& in) {
  in.kind = lower::InstrKind::wait;
  in.message = -1;
  in.collective = -1;
  in.peer = -1;
}

TEST(CorruptedBackward, TheUncorruptedProgramsPass) {
  for (const Prepared& p : {ring_plan(), remapping_plan()}) EXPECT_EQ(run_program(p, p.program()), "");
}

TEST(CorruptedBackward, DroppedAccumulatorTransferIsCaughtOnTheOwnerNamingDK) {
  const Prepared p = ring_plan();
  lower::Program program = p.program();
  const int m = home_accumulator(program, 0);
  ASSERT_GE(m, 0) << "rank 0's dK/dV never comes home; the case no longer tests dropped accumulators";
  for (const auto& [rank, id] : legs_of(program, m))
    make_wait(program.ranks[static_cast<std::size_t>(rank)].instrs[static_cast<std::size_t>(id)]);
  const std::string message = run_program(p, program);
  EXPECT_TRUE(contains(message, "rank 0: sequence")) << message;
  EXPECT_TRUE(contains(message, "has no dK on this rank")) << message;
}

TEST(CorruptedBackward, AccumulatorDeliveredToTheWrongRankIsCaughtThereNamingDK) {
  const Prepared p = ring_plan();
  lower::Program program = p.program();
  const int m = home_accumulator(program, 0);
  ASSERT_GE(m, 0);
  lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
  const int wrong = msg.src == 1 ? 2 : 1;  // neither the owner nor the sender
  msg.dst = wrong;
  std::uint64_t key = std::uint64_t{1} << 40;  // unused by the lowering between any two ranks
  for (const auto& [rank, id] : legs_of(program, m)) {
    lower::Instr& in = program.ranks[static_cast<std::size_t>(rank)].instrs[static_cast<std::size_t>(id)];
    if (in.kind == lower::InstrKind::recv) {  // the owner no longer receives it: the wrong rank does
      lower::Instr moved = in;
      moved.deps.clear();
      moved.key = ++key;
      make_wait(in);
      auto& list = program.ranks[static_cast<std::size_t>(wrong)].instrs;
      list.push_back(moved);
      for (auto& send : program.ranks[static_cast<std::size_t>(msg.src)].instrs) {
        if (send.kind == lower::InstrKind::send && send.message == m && send.offset == moved.offset) {
          send.peer = wrong;
          send.key = key;
          send.match = static_cast<int>(list.size()) - 1;
        }
      }
    }
  }
  const std::string message = run_program(p, program);
  EXPECT_TRUE(contains(message, "rank " + std::to_string(wrong) + ": holds dK rows of sequence")) << message;
  EXPECT_TRUE(contains(message, "outside its linear layout")) << message;
  EXPECT_TRUE(contains(message, "rank 0: sequence")) << message;  // and the owner misses them
}

TEST(CorruptedBackward, AccumulatorThatDropsWhatItReceivedIsCaughtNumerically) {
  const Prepared p = ring_plan();
  lower::Program program = p.program();
  // A mid-chain accumulator send that forwards only its own partial, losing the ones before it.
  int rank = -1, id = -1;
  for (const lower::RankProgram& rp : program.ranks) {
    for (std::size_t i = 0; i < rp.instrs.size() && id < 0; ++i) {
      const lower::Instr& in = rp.instrs[i];
      if (in.kind == lower::InstrKind::send && in.pass == Pass::bwd && !in.reads.empty() &&
          program.messages[static_cast<std::size_t>(in.message)].purpose == lower::Purpose::dkv) {
        rank = rp.rank;
        id = static_cast<int>(i);
      }
    }
  }
  ASSERT_GE(id, 0) << "no accumulator send forwards a received accumulator";
  lower::Instr& send = program.ranks[static_cast<std::size_t>(rank)].instrs[static_cast<std::size_t>(id)];
  const int owner = program.messages[static_cast<std::size_t>(send.message)].kv_owner;
  send.reads.clear();
  const std::string message = run_program(p, program);
  EXPECT_TRUE(contains(message, "rank " + std::to_string(owner) + ": dK of sequence")) << message;
  EXPECT_TRUE(contains(message, "differs from the float64 reference")) << message;
}

TEST(CorruptedBackward, AccumulatorWhoseSlicesLeaveOutWhatItForwardsIsCaughtBySender) {
  const Prepared p = ring_plan();
  lower::Program program = p.program();
  // A mid-chain accumulator relabelled with another owner's rows: what it received cannot travel on.
  int rank = -1, m = -1;
  for (const lower::RankProgram& rp : program.ranks) {
    for (const lower::Instr& in : rp.instrs) {
      if (m < 0 && in.kind == lower::InstrKind::send && in.pass == Pass::bwd && !in.reads.empty() &&
          program.messages[static_cast<std::size_t>(in.message)].purpose == lower::Purpose::dkv) {
        rank = rp.rank;
        m = in.message;
      }
    }
  }
  ASSERT_GE(m, 0) << "no accumulator send forwards a received accumulator";
  lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
  const int home = home_accumulator(program, msg.kv_owner == 0 ? 1 : 0);
  ASSERT_GE(home, 0);
  msg.slices = program.messages[static_cast<std::size_t>(home)].slices;
  const std::string message = run_program(p, program);
  EXPECT_TRUE(contains(message, "rank " + std::to_string(rank) + " instr")) << message;
  EXPECT_TRUE(
      contains(message, "rows of dK, but message " + std::to_string(m) + " carries only 0 of them on"))
      << message;
}

TEST(CorruptedBackward, SkippedInverseRemapIsCaughtNamingTheGradient) {
  const Prepared p = remapping_plan();
  // Backward collectives: the inverse of to_linear brings dO to the attention layout, the inverse of
  // to_attention brings dQ, dK, dV home to the linear layout.
  for (const auto& [direction, tensor] : {std::pair{plan::RemapDirection::to_attention, std::string("dO")},
                                          std::pair{plan::RemapDirection::to_linear, std::string("dQ")}}) {
    SCOPED_TRACE(tensor);
    lower::Program program = p.program();
    int skipped = 0;
    for (const lower::Collective& col : program.collectives) {
      if (col.pass != Pass::bwd || col.direction != direction || skipped > 0) continue;
      for (std::size_t i = 0; i < col.ranks.size(); ++i)
        make_wait(program.ranks[static_cast<std::size_t>(col.ranks[i])]
                      .instrs[static_cast<std::size_t>(col.instrs[i])]);
      ++skipped;
    }
    ASSERT_EQ(skipped, 1) << "the plan has no backward remap; the case no longer tests inverse remaps";
    const std::string message = run_program(p, program);
    EXPECT_TRUE(contains(message, "rank ")) << message;
    EXPECT_TRUE(
        contains(message, tensor == "dO" ? "output gradient dO row of sequence" : "has no dQ on this rank"))
        << message;
  }
}

}  // namespace
}  // namespace zb
