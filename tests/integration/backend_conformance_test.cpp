// The executor conformance suite over every registered backend (core/exec/backend_registry.hpp): a new
// backend joins it by registering, with no edit here. On random small clusters and batches (forward only,
// and forward and backward), for every registered strategy, a backend's trace follows the Program under
// the trace rules every backend shares (core/exec/trace.hpp):
//   * each rank's compute events are its compute instructions (one each), started in list order: along
//     the list, no instruction starts before the one before it (equal starts, as of empty kernels, are
//     in order whichever way the trace lists them);
//   * one send event per point-to-point message, on its source rank and naming its destination, and one
//     recv event on its destination naming its source, however many legs the message was routed in
//     (relay legs are on the nic track, not counted here);
//   * one event per collective instruction, on the rank that issued it.
// A backend this build lacks, or one this machine cannot run (cuda without a GPU), is skipped saying why.
// The reference backend's head-parallel options and its numerics are in
// tests/integration/conformance_test.cpp and strategies_test.cpp; the simulator's timing properties in
// tests/unit/lower/conformance_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/error.hpp"
#include "core/exec/backend_registry.hpp"
#include "core/run/execute.hpp"
#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

using ComputeSet = std::map<int, std::vector<std::pair<Pass, int>>>;  // rank → sorted (pass, plan op)
using ComputeStarts = std::map<std::tuple<int, Pass, int>, std::deque<double>>;  // (rank, pass, op) → starts
using PeerCounts = std::map<std::tuple<int, int, Pass>, int>;  // (rank, peer, pass) → events

// What the Program prescribes.
struct Expected {
  ComputeSet compute;
  PeerCounts sends, recvs;
  std::map<std::pair<int, Pass>, int> collectives;  // (rank, pass) → collective instructions
};

void sort_each(ComputeSet& compute) {
  for (auto& [rank, list] : compute) std::sort(list.begin(), list.end());
}

Expected expected_of(const lower::Program& program) {
  Expected e;
  std::vector<char> moved(program.messages.size(), 0);
  for (const lower::RankProgram& rank : program.ranks) {
    for (const lower::Instr& in : rank.instrs) {
      if (lower::is_compute(in)) e.compute[rank.rank].emplace_back(in.pass, in.plan_op);
      if (in.kind == lower::InstrKind::collective) ++e.collectives[{rank.rank, in.pass}];
      // A point-to-point message: its own (not relay) send and recv legs are on the comm stream.
      if (in.kind == lower::InstrKind::send && in.stream == lower::Stream::comm)
        moved[static_cast<std::size_t>(in.message)] = 1;
    }
  }
  for (std::size_t m = 0; m < moved.size(); ++m) {
    if (!moved[m]) continue;
    const lower::Message& message = program.messages[m];
    ++e.sends[{message.src, message.dst, message.pass}];
    ++e.recvs[{message.dst, message.src, message.pass}];
  }
  sort_each(e.compute);
  return e;
}

// Where the Program's compute list of some rank is not followed by the trace's start times: "rank 3:
// instr 5 of the list (bwd, op 7) starts at 1.2e-3 s, before the one before it (1.3e-3 s)"; empty when
// every instruction has its event and starts no earlier than the one before it.
std::string compute_order_problem(const lower::Program& program, const Trace& t) {
  ComputeStarts starts;
  for (const TraceEvent& e : t.events)
    if (e.track == Track::compute) starts[{e.rank, e.pass, e.op}].push_back(e.start);
  for (auto& [key, list] : starts) std::sort(list.begin(), list.end());
  for (const lower::RankProgram& rank : program.ranks) {
    double before = -std::numeric_limits<double>::infinity();
    int index = 0;
    for (const lower::Instr& in : rank.instrs) {
      if (!lower::is_compute(in)) continue;
      std::deque<double>& list = starts[{rank.rank, in.pass, in.plan_op}];
      const std::string where = "rank " + std::to_string(rank.rank) + ": compute instr " +
                                std::to_string(index) + " of the list (" + to_string(in.pass) + ", op " +
                                std::to_string(in.plan_op) + ")";
      if (list.empty()) return where + " has no event";
      const double start = list.front();
      list.pop_front();
      if (start < before)
        return where + " starts at " + std::to_string(start) + " s, before the one before it (" +
               std::to_string(before) + " s)";
      before = start;
      ++index;
    }
  }
  return "";
}

Expected observed_in(const Trace& t) {
  Expected e;
  for (const TraceEvent& event : t.events) {
    if (event.track == Track::compute) e.compute[event.rank].emplace_back(event.pass, event.op);
    if (event.track != Track::comm) continue;
    if (event.category == EventCategory::send)
      ++e.sends[{event.rank, event.peer, event.pass}];
    else if (event.category == EventCategory::recv)
      ++e.recvs[{event.rank, event.peer, event.pass}];
    else
      ++e.collectives[{event.rank, event.pass}];
  }
  sort_each(e.compute);
  return e;
}

std::vector<std::string> registered_backend_names() {
  std::vector<std::string> names;
  for (const BackendInfo& info : backend_catalog()) names.push_back(info.name);
  return names;
}

class BackendConformance : public testing::TestWithParam<std::string> {};

TEST_P(BackendConformance, TraceFollowsTheProgramsComputeOrderMessagesAndCollectives) {
  const BackendInfo* info = find_backend(GetParam());
  ASSERT_NE(info, nullptr);
  if (!info->available())
    GTEST_SKIP() << "backend " << info->name << " is not in this build: " << info->unavailable;
  const auto executor = make_executor(info->name);
  int compared = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const test::RandomCase c = test::random_case(seed, 1e6, 600);
    const Passes passes = seed % 2 == 1 ? Passes::fwd_bwd : Passes::fwd;
    if (seed == 0) {
      // A backend that cannot run on this machine says so before any work (Executor::prepare).
      try {
        executor->prepare(c.scenario.cluster);
      } catch (const Error& e) {
        GTEST_SKIP() << "backend " << info->name << " cannot run on this machine: " << e.what();
      }
    }
    for (const SystemSpec& system : test::reference_systems(c.scenario.cluster)) {
      // Head-parallel groups as wide as a node need a backend computing the model's heads (a backend
      // option); at its defaults the reference computes 2 (tests/integration/conformance_test.cpp covers
      // them).
      if (system.options.value("heads", std::string("ring")) == "auto") continue;
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + test::describe(c) + ", " + system.label);
      const test::PreparedPlan prepared(c.scenario, system, c.lengths, passes);
      if (!prepared.plan.feasible()) continue;
      const lower::Program program = prepared.program();
      const Trace trace = executor->run(program, exec_context(prepared.scenario, prepared.cost));
      EXPECT_EQ(trace.backend, info->name);
      EXPECT_EQ(trace.world_size, program.world_size);
      const Expected want = expected_of(program);
      const Expected got = observed_in(trace);
      // The same compute instructions, then in the Program's order by their start times.
      EXPECT_EQ(got.compute, want.compute);
      EXPECT_EQ(compute_order_problem(program, trace), "");
      EXPECT_EQ(got.sends, want.sends);
      EXPECT_EQ(got.recvs, want.recvs);
      EXPECT_EQ(got.collectives, want.collectives);
      ++compared;
    }
  }
  EXPECT_GT(compared, 12);
}

INSTANTIATE_TEST_SUITE_P(EveryRegisteredBackend, BackendConformance,
                         testing::ValuesIn(registered_backend_names()),
                         [](const testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (const char c : param.param)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace zb
