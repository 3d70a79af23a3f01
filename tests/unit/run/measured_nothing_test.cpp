// The exit rule of a measured backend (core/run/measured_nothing.hpp): a run in which no system ran any
// iteration measured nothing and must end as a failure, while on the simulator an out-of-memory system is
// a result like any other.
#include <gtest/gtest.h>

#include "core/run/measured_nothing.hpp"

namespace zb {
namespace {

IterationResult out_of_memory(int iteration) {
  IterationResult it;
  it.iteration = iteration;
  it.feasible = false;
  plan::OomReport oom;
  oom.rank = 0;
  oom.tokens_needed = 30581;
  oom.token_capacity = 6383;
  it.oom.push_back(oom);
  return it;
}

IterationResult ran(int iteration) {
  IterationResult it;
  it.iteration = iteration;
  return it;
}

SystemResult system(const std::string& label, std::vector<IterationResult> iterations) {
  SystemResult s;
  s.system.name = label;
  s.system.label = label;
  s.iterations = std::move(iterations);
  return s;
}

RunResult run_on(const std::string& backend, std::vector<SystemResult> systems) {
  RunResult r;
  r.backend = backend;
  r.systems = std::move(systems);
  return r;
}

TEST(MeasuredNothing, EverySystemOutOfMemoryOnAMeasuredBackendSaysWhy) {
  for (const std::string backend : {"cuda", "reference"}) {
    const std::string why =
        nothing_measured(run_on(backend, {system("zeppelin", {out_of_memory(0), out_of_memory(1)}),
                                          system("ring-cp", {out_of_memory(0)})}));
    EXPECT_NE(why.find("backend " + backend + " measured nothing"), std::string::npos) << why;
    EXPECT_NE(why.find("zeppelin: out of GPU memory in 2 of 2 iterations"), std::string::npos) << why;
    EXPECT_NE(why.find("ring-cp: out of GPU memory in 1 of 1 iterations"), std::string::npos) << why;
    EXPECT_NE(why.find("needs 30581 tokens"), std::string::npos) << why;
    EXPECT_EQ(why.find("measured on"), std::string::npos) << why;
  }
}

TEST(MeasuredNothing, OneIterationThatRanIsAMeasurement) {
  EXPECT_EQ(nothing_measured(run_on("cuda", {system("zeppelin", {out_of_memory(0), ran(1)})})), "");
  EXPECT_EQ(
      nothing_measured(run_on("cuda", {system("zeppelin", {out_of_memory(0)}), system("ring-cp", {ran(0)})})),
      "");
}

TEST(MeasuredNothing, TheSimulatorsOutOfMemorySystemsAreAResult) {
  EXPECT_EQ(nothing_measured(run_on("sim", {system("zeppelin", {out_of_memory(0)})})), "");
}

}  // namespace
}  // namespace zb
