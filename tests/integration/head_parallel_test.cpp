// Head-parallel attention (ulysses, USP) on real numbers: the head all-to-alls move exactly the head
// slices the Program names, attention runs only on its op's heads, and the float64 check sees every
// (token, head) row, so a head slice that never arrives is caught numerically, per head. The random
// scenarios of strategies_test and backward_test run ulysses (degree 2) and USP (degree 2, ring 2) too.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

using Prepared = test::PreparedPlan;

reference::ReferenceOptions options_with(int heads, int kv_heads) {
  reference::ReferenceOptions options = test::in_process_options();
  options.heads = heads;
  options.kv_heads = kv_heads;
  options.receive_timeout = std::chrono::milliseconds(3000);
  return options;
}

// Runs `program` of p's plan; the error message, empty when it verified.
std::string failure_of(const Prepared& p, const lower::Program& program,
                       const reference::ReferenceOptions& options) {
  reference::ReferenceExecutor executor(options);
  try {
    const Trace trace = executor.run(program, exec_context(p.scenario, p.cost));
    EXPECT_NE(trace.model_note.find("forward verified"), std::string::npos) << trace.model_note;
    if (program.backward) {
      EXPECT_NE(trace.model_note.find("backward verified"), std::string::npos) << trace.model_note;
    }
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// The head all-to-all messages of `program` in `pass` whose slices are `tensor`.
std::vector<int> head_messages(const lower::Program& program, Pass pass, lower::Tensor tensor) {
  std::vector<int> out;
  for (const lower::Collective& c : program.collectives) {
    if (c.kind != lower::CollectiveKind::all_to_all || c.pass != pass) continue;
    for (const int m : c.messages) {
      const lower::Message& message = program.messages[static_cast<std::size_t>(m)];
      if (!message.slices.empty() && message.slices.front().tensor == tensor) out.push_back(m);
    }
  }
  return out;
}

// Removes message `m` from its collective: its sender never sends it and its receiver never waits for it.
lower::Program without_message(lower::Program program, int m) {
  auto& list =
      program.collectives[static_cast<std::size_t>(program.messages[static_cast<std::size_t>(m)].collective)]
          .messages;
  list.erase(std::find(list.begin(), list.end(), m));
  return program;
}

struct Shape {
  const char* name;
  int nodes, gpus_per_node;
  nlohmann::json options;
  std::vector<std::int64_t> lengths;
};

const Shape kShapes[] = {
    {"ulysses u=2", 1, 4, {{"degree", 2}}, {700, 33, 5, 1}},
    {"ulysses u=4", 1, 4, {{"degree", 4}}, {515, 64, 2}},
    {"USP u=2 r=2 over two nodes", 2, 2, {{"degree", 2}, {"ring", 2}}, {900, 17, 1}},
    {"USP u=2 r=4", 1, 8, {{"degree", 2}, {"ring", 4}}, {1024, 3}},
};

// Reference dims that split as the plan's slices do: every head apart, GQA split (each member its own
// K/V heads) and GQA replicated (every member reads the one K/V head, so dK/dV add over members).
const std::pair<int, int> kDims[] = {{4, 4}, {8, 4}, {4, 1}};

TEST(HeadParallel, EveryShapeVerifiesForwardAndBackwardPerHead) {
  for (const Shape& shape : kShapes) {
    for (const auto& [heads, kv_heads] : kDims) {
      SCOPED_TRACE(std::string(shape.name) + ", reference heads " + std::to_string(heads) + " kv " +
                   std::to_string(kv_heads));
      const Prepared p(test::small_cluster(shape.nodes, shape.gpus_per_node, false, 11),
                       test::system("ulysses", shape.options), shape.lengths, Passes::fwd_bwd);
      ASSERT_TRUE(p.plan.feasible());
      const lower::Program program = p.program();
      ASSERT_FALSE(head_messages(program, Pass::fwd, lower::Tensor::Q).empty())
          << "the lowering names the head slices";
      EXPECT_EQ(failure_of(p, program, options_with(heads, kv_heads)), "");
    }
  }
}

TEST(HeadParallel, SameInputsGiveTheSameOutputBits) {
  const Prepared p(test::small_cluster(1, 4, false, 5), test::system("ulysses", {{"degree", 4}}), {800, 41},
                   Passes::fwd_bwd);
  std::vector<std::uint64_t> checksums[2];
  for (auto& sums : checksums) {
    reference::ReferenceExecutor executor(options_with(4, 1));
    (void)executor.run(p.program(), exec_context(p.scenario, p.cost));
    for (const auto& r : executor.last_results()) sums.push_back(r.verification.checksum);
  }
  EXPECT_EQ(checksums[0], checksums[1]);
}

// Every O message left out in turn: the owner's rows of those tokens lack the sender's heads, which the
// float64 check reports as a wrong output (not a missing row: the owner computed its own heads).
TEST(HeadParallel, ADroppedOutputHeadSliceIsCaughtNumerically) {
  const Prepared p(test::small_cluster(1, 4, false, 7), test::system("ulysses", {{"degree", 2}}), {600, 20});
  const lower::Program program = p.program();
  const std::vector<int> outputs = head_messages(program, Pass::fwd, lower::Tensor::O);
  ASSERT_FALSE(outputs.empty());
  for (const int m : outputs) {
    const std::string error = failure_of(p, without_message(program, m), options_with(2, 2));
    EXPECT_NE(error.find("differs from the float64 reference"), std::string::npos)
        << "message " << m << ": " << error;
  }
}

// A Q/K/V message left out: its receiver never gets those tokens' rows for its heads, so its attention
// has no query row for them (USP: the ring's K/V of them are missing too).
TEST(HeadParallel, ADroppedInputHeadSliceIsCaught) {
  const Prepared p(test::small_cluster(1, 4, false, 7), test::system("ulysses", {{"degree", 2}, {"ring", 2}}),
                   {600, 20});
  const lower::Program program = p.program();
  const std::vector<int> inputs = head_messages(program, Pass::fwd, lower::Tensor::Q);
  ASSERT_FALSE(inputs.empty());
  const std::string error = failure_of(p, without_message(program, inputs.front()), options_with(2, 2));
  EXPECT_NE(error.find("on this rank"), std::string::npos) << error;
}

// Backward: a dQ/dK/dV message left out leaves the owner without its gradients for the sender's heads
// (caught element by element); a dO message left out leaves the heads' owner without dO rows.
TEST(HeadParallel, ADroppedGradientHeadSliceIsCaught) {
  const Prepared p(test::small_cluster(1, 4, false, 7), test::system("ulysses", {{"degree", 2}}), {600, 20},
                   Passes::fwd_bwd);
  const lower::Program program = p.program();
  const std::vector<int> gradients = head_messages(program, Pass::bwd, lower::Tensor::dQ);
  ASSERT_FALSE(gradients.empty());
  for (const int m : gradients) {
    const std::string error = failure_of(p, without_message(program, m), options_with(4, 2));
    EXPECT_NE(error.find("differs from the float64 reference"), std::string::npos)
        << "message " << m << ": " << error;
  }
  const std::vector<int> output_gradients = head_messages(program, Pass::bwd, lower::Tensor::dO);
  ASSERT_FALSE(output_gradients.empty());
  const std::string error =
      failure_of(p, without_message(program, output_gradients.front()), options_with(4, 2));
  EXPECT_NE(error.find("output gradient dO row"), std::string::npos) << error;
}

// Reference dims that cannot carry the plan's slices (2 model heads of 8 per member, 1 reference head
// in all) are bad input naming the system and what to set, before anything runs.
TEST(HeadParallel, ReferenceHeadsThatCannotCarryTheSlicesAreExit2) {
  const Prepared p(test::small_cluster(1, 4, false), test::system("ulysses", {{"degree", 4}}), {300});
  reference::ReferenceExecutor executor(options_with(2, 2));
  try {
    (void)executor.run(p.program(), exec_context(p.scenario, p.cost));
    ADD_FAILURE() << "ran head slices the reference's heads cannot carry";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("system 'ulysses{\"degree\":4}' (ulysses)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("ZB_REF_HEADS"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zb
