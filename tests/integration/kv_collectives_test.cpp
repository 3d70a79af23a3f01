// The reference backend on collectives with real rows (docs/REFERENCE.md "Collectives"): Llama-3 CP's
// K/V all-gather, its backward re-gather and the reduce-scatter of dK/dV verify forward and backward on
// real numbers; an opaque collective (no messages, as tensor parallelism's all-gather of hidden states)
// moves nothing and is done once posted; broken K/V collectives are caught naming what is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "core/plan/verify.hpp"
#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

using Prepared = test::PreparedPlan;

// Runs `program` on the reference backend; the error text, empty when it passed (`note` gets the trace's).
std::string run_program(const Prepared& p, const lower::Program& program, std::string* note = nullptr,
                        bool gqa = false) {
  reference::ReferenceOptions options = test::in_process_options(gqa);
  options.receive_timeout = std::chrono::milliseconds(1500);
  reference::ReferenceExecutor executor(options);
  try {
    const Trace trace = executor.run(program, exec_context(p.scenario, p.cost));
    if (note != nullptr) *note = trace.model_note;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    return e.what();
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Prepared llama3(int nodes, int gpus_per_node, int degree, std::vector<std::int64_t> lengths) {
  return Prepared(test::small_cluster(nodes, gpus_per_node, false, 5),
                  test::system("llama3-cp", {{"degree", degree}}), std::move(lengths), Passes::fwd_bwd);
}

TEST(KvCollectives, Llama3CpVerifiesForwardAndBackwardOnRealRows) {
  struct Case {
    int nodes, gpus_per_node, degree;
    std::vector<std::int64_t> lengths;
    bool gqa;
  };
  const Case cases[] = {
      {1, 4, 4, {517, 64, 3, 1}, false},  // one group; documents shorter than 2C leave chunks empty
      {2, 4, 8, {900, 333, 2}, true},     // a group across two nodes, GQA
      {2,
       2,
       2,
       {400, 401, 7, 90, 1, 1},
       false},  // two data-parallel groups, several packs' worth of documents
  };
  for (const Case& c : cases) {
    const Prepared p = llama3(c.nodes, c.gpus_per_node, c.degree, c.lengths);
    ASSERT_TRUE(p.plan.feasible());
    std::string note;
    EXPECT_EQ(run_program(p, p.program(), &note, c.gqa), "")
        << c.nodes << "x" << c.gpus_per_node << " degree " << c.degree;
    EXPECT_TRUE(contains(note, "forward verified") && contains(note, "backward verified")) << note;
  }
}

// Same inputs, same bits: the reduce-scatter adds partials in the collective's order, not arrival order.
TEST(KvCollectives, ReduceScatteredGradientsAreTheSameBitsOnEveryRun) {
  const Prepared p = llama3(1, 4, 4, {700, 41, 5});
  std::vector<std::uint64_t> first;
  for (int run = 0; run < 3; ++run) {
    reference::ReferenceExecutor executor(test::in_process_options());
    (void)executor.run(p.program(), exec_context(p.scenario, p.cost));
    std::vector<std::uint64_t> sums;
    for (const auto& r : executor.last_results()) sums.push_back(r.gradients.checksum);
    if (run == 0) first = sums;
    EXPECT_EQ(sums, first) << "run " << run;
  }
}

// Inserts `op` at position `at` of `rank`'s list, renumbering the ops after it and their deps.
void insert_op(plan::Plan& plan, int rank, int at, plan::Op op) {
  auto& ops = plan.ranks[static_cast<std::size_t>(rank)].ops;
  for (plan::Op& o : ops) {
    if (o.id >= at) ++o.id;
    for (int& d : o.deps)
      if (d >= at) ++d;
  }
  op.id = at;
  ops.insert(ops.begin() + at, std::move(op));
}

// A tensor-parallel-style all-gather of hidden states: no group, no messages. It sits between each rank's
// QKV GEMM and its K/V all-gather, forward (and its reduce-scatter backward), and changes no number.
TEST(KvCollectives, AnOpaqueCollectiveMovesNothingAndCompletesWhenPosted) {
  Prepared p = llama3(1, 4, 2, {300, 77, 4});
  ASSERT_TRUE(p.plan.feasible());
  for (int r = 0; r < 4; ++r) {
    plan::Op hidden;
    hidden.kind = plan::OpKind::collective;
    hidden.collective = plan::CollectiveKind::all_gather;
    hidden.name = "hidden all-gather";
    hidden.collective_ranks = {0, 1, 2, 3};
    hidden.tag = 1000;
    hidden.bytes = 4096;
    hidden.deps = {0};  // the first QKV GEMM
    insert_op(p.plan, r, 1, hidden);
    plan::Op& kv_gather = p.plan.ranks[static_cast<std::size_t>(r)].ops[2];
    ASSERT_EQ(kv_gather.kind, plan::OpKind::collective);
    kv_gather.deps.push_back(1);
  }
  plan::VerifyOptions options;
  const auto problems = plan::verify(p.plan, options);
  ASSERT_TRUE(problems.empty()) << problems.front();
  const lower::Program program = p.program();
  int opaque = 0;
  for (const lower::Collective& col : program.collectives)
    opaque += col.group < 0 && col.messages.empty() ? 1 : 0;
  EXPECT_EQ(opaque, 2) << "the all-gather and its reduce-scatter";
  std::string note;
  EXPECT_EQ(run_program(p, program, &note), "");
  EXPECT_TRUE(contains(note, "backward verified")) << note;
}

// Caught before anything runs: an attention reads a gathered message its all-gather no longer delivers.
TEST(KvCollectives, AGatherMessageLeftOutOfItsCollectiveIsCaught) {
  const Prepared p = llama3(1, 4, 4, {300, 5});
  lower::Program program = p.program();
  auto gather =
      std::find_if(program.collectives.begin(), program.collectives.end(), [](const lower::Collective& c) {
        return c.kind == lower::CollectiveKind::all_gather && c.pass == Pass::fwd && !c.messages.empty();
      });
  ASSERT_NE(gather, program.collectives.end());
  gather->messages.pop_back();
  const std::string message = run_program(p, program);
  EXPECT_TRUE(contains(message, "which no recv or all-gather of this rank receives")) << message;
}

// Caught by the gradient check: a partial the reduce-scatter no longer carries stays on the rank that
// computed it, and its owner's dK misses it.
TEST(KvCollectives, APartialLeftOutOfTheReduceScatterIsCaught) {
  const Prepared p = llama3(1, 4, 4, {300, 5});
  lower::Program program = p.program();
  auto scatter =
      std::find_if(program.collectives.begin(), program.collectives.end(), [](const lower::Collective& c) {
        return c.kind == lower::CollectiveKind::reduce_scatter && !c.messages.empty();
      });
  ASSERT_NE(scatter, program.collectives.end());
  scatter->messages.erase(scatter->messages.begin());
  const std::string message = run_program(p, program);
  EXPECT_TRUE(contains(message, "outside its linear layout") ||
              contains(message, "differs from the float64 reference"))
      << message;
}

}  // namespace
}  // namespace zb
