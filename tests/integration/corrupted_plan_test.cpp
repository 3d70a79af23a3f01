// Broken plans and programs must fail loudly and quickly, each caught by the first layer able to see it:
//   * lower() refuses a plan it cannot lower (a send without its recv, a malformed route, remap moves the
//     two ends disagree on), naming the rank and the plan op;
//   * lower::verify refuses a Program that breaks the promises of program.hpp (counterparts, fragments,
//     keys, deliveries, deadlock);
//   * the reference executor catches what neither can see (wrong numbers from a dropped block, an
//     instruction that reads a buffer it does not wait for, a message whose slices miss rows, remap rows
//     that never come) and, run on a corrupted Program anyway, reports a wrong peer, a missing send or a
//     wrong fragment itself, without hanging (receives time out; a failing rank stops the others at once).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "core/lower/verify_program.hpp"
#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

using Prepared = test::PreparedPlan;

Prepared ring_plan() {
  return test::ring_plan();
}
// Zeppelin over two nodes of 8 GPUs: one long sequence is routed over every NIC (relays on proxies).
Prepared routed_plan() {
  return Prepared(test::small_cluster(2, 8, false), test::system("zeppelin", {{"partitioning", "flat"}}),
                  {4096});
}
// Zeppelin remapping between the linear and the attention layout.
Prepared remapping_plan() {
  return test::remapping_plan();
}

reference::ReferenceOptions quick_options() {
  reference::ReferenceOptions options;
  options.transport = reference::TransportChoice::in_process;
  options.receive_timeout = std::chrono::milliseconds(1500);
  return options;
}

struct Outcome {
  std::string message;  // empty when it passed
  double seconds = 0;
};

// Runs `program` (of p's plan) on the reference backend.
Outcome run_program(const Prepared& p, const lower::Program& program) {
  reference::ReferenceExecutor executor(quick_options());
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome;
  try {
    (void)executor.run(program, exec_context(p.scenario, p.cost));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    outcome.message = e.what();
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

Outcome run_plan(const Prepared& p) {
  return run_program(p, p.program());
}

// What lower() says about the plan; empty when it lowers.
std::string lowering_error(const Prepared& p) {
  try {
    (void)p.program();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    return e.what();
  }
  return {};
}

std::string joined(const std::vector<std::string>& problems) {
  std::string text;
  for (const auto& p : problems) text += p + "\n";
  return text;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

plan::Op* find_op(plan::Plan& p, int rank, plan::OpKind kind, int nth = 0) {
  for (auto& op : p.ranks[static_cast<std::size_t>(rank)].ops)
    if (op.kind == kind && nth-- == 0) return &op;
  return nullptr;
}

// The first instruction of `rank` satisfying `pred`, −1 when none.
template <typename Pred>
int find_instr(const lower::Program& program, int rank, Pred pred) {
  const auto& list = program.ranks[static_cast<std::size_t>(rank)].instrs;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (pred(list[i])) return static_cast<int>(i);
  return -1;
}

bool is_kv_send(const lower::Instr& in) {
  return in.kind == lower::InstrKind::send && in.stream == lower::Stream::comm && in.pass == Pass::fwd;
}

TEST(CorruptedPlans, TheUncorruptedPlanPasses) {
  const Prepared p = ring_plan();
  const lower::Program program = p.program();
  EXPECT_EQ(joined(lower::verify(program)), "");
  EXPECT_EQ(run_program(p, program).message, "");
}

// Caught by the reference only: the plan and its Program are well-formed, the numbers are wrong.
TEST(CorruptedPlans, DroppedAttentionBlockIsCaughtWithRankSequenceAndToken) {
  Prepared p = ring_plan();
  plan::Op* op = find_op(p.plan, 2, plan::OpKind::attention, 1);  // a ring step with remote keys
  ASSERT_NE(op, nullptr);
  std::vector<plan::AttentionBlock> blocks = plan::expand_blocks(p.plan, 2, *op);
  ASSERT_GE(blocks.size(), 1u);
  blocks.erase(blocks.begin());
  op->blocks = blocks;
  op->zigzag_kv_rank = -1;
  const lower::Program program = p.program();
  EXPECT_EQ(joined(lower::verify(program)), "");
  const std::string message = run_program(p, program).message;
  EXPECT_TRUE(contains(message, "rank 2")) << message;
  EXPECT_TRUE(contains(message, "sequence")) << message;
  EXPECT_TRUE(contains(message, "token")) << message;
  EXPECT_TRUE(contains(message, "float64 reference")) << message;
}

// A plan send to the wrong peer cannot be lowered: its recv has no send.
TEST(CorruptedPlans, SendToTheWrongPeerIsRefusedByTheLowering) {
  Prepared p = ring_plan();
  plan::Op* send = find_op(p.plan, 0, plan::OpKind::send);
  ASSERT_NE(send, nullptr);
  const int intended = send->peer;
  send->peer = intended == 3 ? 2 : 3;  // another rank, which has no recv for this tag from rank 0
  const std::string message = lowering_error(p);
  EXPECT_TRUE(contains(message, "rank " + std::to_string(intended))) << message;
  EXPECT_TRUE(contains(message, "has no send to this rank with this tag")) << message;
}

// The same fault in a Program: lower::verify names it, and the reference, run anyway, reports it within
// about the receive timeout: the wrong receiver the leg no recv expects, or the starved one its wait.
TEST(CorruptedPlans, SendLegToTheWrongPeerIsCaughtWithoutHanging) {
  const Prepared p = ring_plan();
  lower::Program program = p.program();
  const int id = find_instr(program, 0, is_kv_send);
  ASSERT_GE(id, 0);
  lower::Instr& send = program.ranks[0].instrs[static_cast<std::size_t>(id)];
  send.peer = send.peer == 3 ? 2 : 3;
  EXPECT_NE(joined(lower::verify(program)), "");
  const Outcome outcome = run_program(p, program);
  ASSERT_FALSE(outcome.message.empty());
  const bool names_wait = contains(outcome.message, "waited") && contains(outcome.message, "transfer key");
  const bool names_stray = contains(outcome.message, "none of its recv instructions expects it");
  EXPECT_TRUE(names_wait || names_stray) << outcome.message;
  EXPECT_LT(outcome.seconds, 10.0) << "a wrong peer must end in an error within about the receive timeout";
}

// A plan send that disappeared cannot be lowered either.
TEST(CorruptedPlans, MissingSendIsRefusedByTheLowering) {
  Prepared p = ring_plan();
  plan::Op* send = find_op(p.plan, 0, plan::OpKind::send);
  ASSERT_NE(send, nullptr);
  const int receiver = send->peer;
  send->kind = plan::OpKind::gemm;  // the send silently becomes a tiny GEMM: nothing is ever sent
  send->m = send->n = send->k = 1;
  const std::string message = lowering_error(p);
  EXPECT_TRUE(contains(message, "rank " + std::to_string(receiver))) << message;
  EXPECT_TRUE(contains(message, "has no send to this rank with this tag")) << message;
}

// In a Program: lower::verify names the orphaned recv; the reference's starved receiver times out naming
// its recv instruction, the key and the sender.
TEST(CorruptedPlans, MissingSendLegEndsInATimeoutNamingTheRecvAndKey) {
  const Prepared p = ring_plan();
  lower::Program program = p.program();
  const int id = find_instr(program, 0, is_kv_send);
  ASSERT_GE(id, 0);
  lower::Instr& send = program.ranks[0].instrs[static_cast<std::size_t>(id)];
  const int receiver = send.peer;
  const std::uint64_t key = send.key;
  send.kind = lower::InstrKind::wait;  // the send does nothing now
  EXPECT_NE(joined(lower::verify(program)), "");
  const Outcome outcome = run_program(p, program);
  EXPECT_TRUE(contains(outcome.message, "rank " + std::to_string(receiver) + ": waited")) << outcome.message;
  EXPECT_TRUE(contains(outcome.message, "transfer key " + std::to_string(key) + " from rank 0"))
      << outcome.message;
  EXPECT_TRUE(contains(outcome.message, "recv kv")) << outcome.message;  // lower::describe of the recv
  EXPECT_LT(outcome.seconds, 10.0);
}

// Caught by the reference's own check before anything runs: the attention still reads the ring step's
// K/V (the Program's `reads`), but no longer waits for the recv that brings it, so it could run before
// the buffer is complete. lower() accepts the plan and lower::verify does not check reads against deps.
TEST(CorruptedPlans, AttentionWithoutItsRecvDependencyIsCaught) {
  Prepared p = ring_plan();
  plan::Op* op = find_op(p.plan, 1, plan::OpKind::attention, 1);
  ASSERT_NE(op, nullptr);
  std::erase_if(op->deps, [&](int d) {
    return p.plan.ranks[1].ops[static_cast<std::size_t>(d)].kind == plan::OpKind::recv;
  });
  const std::string message = run_plan(p).message;
  EXPECT_TRUE(contains(message, "rank 1 instr")) << message;
  EXPECT_TRUE(contains(message, "does not depend on")) << message;
}

// Caught by the reference only: a message whose slices miss rows moves well-formed fragments, and the
// rank that computes with (or forwards) it finds a K row in none of its sources.
TEST(CorruptedPlans, MessageMissingRowsIsCaughtWhereTheRowsAreNeeded) {
  const Prepared p = ring_plan();
  lower::Program program = p.program();
  const int id = find_instr(program, 0, [&](const lower::Instr& in) {
    return is_kv_send(in) && !program.messages[static_cast<std::size_t>(in.message)].slices.empty();
  });
  ASSERT_GE(id, 0);
  lower::Message& m =
      program
          .messages[static_cast<std::size_t>(program.ranks[0].instrs[static_cast<std::size_t>(id)].message)];
  std::vector<lower::Slice> slices = m.slices.copy();
  const auto k = std::find_if(slices.begin(), slices.end(), [](const lower::Slice& s) {
    return s.tensor == lower::Tensor::K && s.rows() > 0;
  });
  ASSERT_NE(k, slices.end());
  slices.erase(k);
  m.slices = lower::SliceList(std::move(slices));
  const std::string message = run_program(p, program).message;
  EXPECT_TRUE(
      contains(message, "is neither on this rank nor in a buffer of the messages this instruction reads"))
      << message;
}

// A malformed route cannot be lowered.
TEST(CorruptedPlans, RoutedSendThroughAMissingProxyIsRefusedByTheLowering) {
  Prepared p = routed_plan();
  plan::Op* routed = nullptr;
  for (auto& r : p.plan.ranks)
    for (auto& op : r.ops)
      if (routed == nullptr && op.kind == plan::OpKind::send && op.route.kind == plan::RouteKind::routed)
        routed = &op;
  ASSERT_NE(routed, nullptr) << "the plan routes nothing; the case no longer tests routes";
  routed->route.proxies.pop_back();  // part sizes and proxies no longer agree
  const std::string message = lowering_error(p);
  EXPECT_TRUE(contains(message, "its route lists")) << message;
  EXPECT_TRUE(contains(message, "proxies")) << message;
}

// A first leg of a routed message that carries another fragment than its relay recv expects:
// lower::verify names the disagreement, and the reference's proxy refuses the leg (and stops the others).
TEST(CorruptedPlans, RelayLegWithTheWrongFragmentIsRefusedByTheProxy) {
  const Prepared p = routed_plan();
  lower::Program program = p.program();
  int src = -1, id = -1;
  for (int r = 0; r < program.world_size && id < 0; ++r) {
    id = find_instr(program, r, [&](const lower::Instr& in) {
      return is_kv_send(in) && in.peer != program.messages[static_cast<std::size_t>(in.message)].dst &&
             in.bytes > 1;
    });
    src = r;
  }
  ASSERT_GE(id, 0) << "no first leg goes through a proxy; the case no longer tests relays";
  lower::Instr& leg = program.ranks[static_cast<std::size_t>(src)].instrs[static_cast<std::size_t>(id)];
  leg.bytes -= 1;
  const std::string problems = joined(lower::verify(program));
  EXPECT_TRUE(contains(problems, "disagrees with its counterpart")) << problems;
  const Outcome outcome = run_program(p, program);
  EXPECT_TRUE(contains(outcome.message, "rank " + std::to_string(leg.peer))) << outcome.message;
  EXPECT_TRUE(contains(outcome.message, "but it expects message")) << outcome.message;
  EXPECT_LT(outcome.seconds, 10.0);
}

// Remap moves the two ends disagree on cannot be lowered.
TEST(CorruptedPlans, RemapMovesTheEndsDisagreeOnAreRefusedByTheLowering) {
  Prepared p = remapping_plan();
  ASSERT_FALSE(p.plan.remap.empty()) << "the plan no longer remaps this batch";
  bool dropped = false;
  for (int r = 0; r < p.plan.world_size && !dropped; ++r) {
    for (plan::Op& op : p.plan.ranks[static_cast<std::size_t>(r)].ops) {
      if (dropped || op.kind != plan::OpKind::remap || op.direction != plan::RemapDirection::to_linear)
        continue;
      const auto moved = std::find_if(op.moves.begin(), op.moves.end(), [&](const plan::RemapMove& m) {
        return m.src == r && m.dst != r && m.range.size() > 0;  // rows this rank sends in the to_linear remap
      });
      if (moved == op.moves.end()) continue;
      op.moves.erase(moved);
      dropped = true;
    }
  }
  ASSERT_TRUE(dropped);
  const std::string message = lowering_error(p);
  EXPECT_TRUE(contains(message, "than that rank's remap sends")) << message;
}

// Caught by the reference only: a remap message left out of its collective is neither sent nor awaited,
// so its rows never reach the linear layout, and the check names a token without an output.
TEST(CorruptedPlans, RemapMessageLeftOutOfItsCollectiveIsCaught) {
  const Prepared p = remapping_plan();
  lower::Program program = p.program();
  lower::Collective* to_linear = nullptr;
  for (auto& c : program.collectives)
    if (to_linear == nullptr && c.kind == lower::CollectiveKind::all_to_all_v &&
        c.direction == plan::RemapDirection::to_linear && !c.messages.empty())
      to_linear = &c;
  ASSERT_NE(to_linear, nullptr) << "the plan no longer remaps this batch";
  to_linear->messages.pop_back();
  const std::string message = run_program(p, program).message;
  EXPECT_TRUE(contains(message, "has no attention output on this rank")) << message;
}

}  // namespace
}  // namespace zb
