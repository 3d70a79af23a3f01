// calibrate --budget (core/qualify/calibration_budget.hpp): the estimate adds every shape's runs, and the
// set is cut to the budget in a fixed order (runs, then the largest shapes, keeping three of each kind,
// then a single run), saying when even the smallest set is over it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/qualify/calibration_budget.hpp"

namespace zb::qualify {
namespace {

const std::vector<GemmDims> llama_7b_gemms{{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}};

TEST(CalibrationBudget, TheEstimateIsEveryShapesRunsAtTheProbedRate) {
  CalibrationShapes shapes;
  shapes.attention_tokens = {100};
  shapes.gemm_rows = {10};
  shapes.repetitions = 4;
  const ProbeCosts probe{.attention_pair_seconds = 1e-6, .gemm_mnk_seconds = 1e-9};
  // 5 runs (a warm-up and 4 timed) of 100·101/2 pairs, and of 10·20·30 multiply-adds.
  EXPECT_NEAR(estimate_seconds(shapes, {{20, 30}}, probe), 5 * (5050e-6 + 6000e-9), 1e-12);
}

TEST(CalibrationBudget, AGenerousBudgetKeepsEveryShape) {
  const CalibrationShapes full;
  const ProbeCosts probe{1e-9, 1e-12};
  const BudgetedShapes b = fit_to_budget(full, llama_7b_gemms, probe, 1e9);
  EXPECT_EQ(b.shapes.attention_tokens, full.attention_tokens);
  EXPECT_EQ(b.shapes.gemm_rows, full.gemm_rows);
  EXPECT_EQ(b.shapes.repetitions, full.repetitions);
  EXPECT_TRUE(b.within_budget);
  EXPECT_DOUBLE_EQ(b.estimate_seconds, b.full_seconds);
}

TEST(CalibrationBudget, RunsGoFirstThenTheLargestShapesThenTheLastRuns) {
  const CalibrationShapes full;  // attention 64..1024 tokens, GEMM rows 16..1024, 5 runs
  const ProbeCosts probe{2e-8, 5e-11};
  const double everything = estimate_seconds(full, llama_7b_gemms, probe);
  // Just under the full set: one run fewer is enough, no shape is dropped.
  BudgetedShapes b = fit_to_budget(full, llama_7b_gemms, probe, 0.99 * everything);
  EXPECT_EQ(b.shapes.repetitions, 4);
  EXPECT_EQ(b.shapes.gemm_rows.size(), full.gemm_rows.size());
  // A fifth: three runs, and the largest shapes go, never below three of each kind; the smallest stay.
  b = fit_to_budget(full, llama_7b_gemms, probe, 0.2 * everything);
  EXPECT_EQ(b.shapes.repetitions, 3);
  EXPECT_GE(b.shapes.attention_tokens.size(), 3U);
  EXPECT_GE(b.shapes.gemm_rows.size(), 3U);
  EXPECT_EQ(b.shapes.attention_tokens.front(), 64);
  EXPECT_EQ(b.shapes.gemm_rows.front(), 16);
  EXPECT_TRUE(b.within_budget);
  EXPECT_LE(b.estimate_seconds, 0.2 * everything);
  // Nothing: the smallest set, one run per shape, and it says it is over.
  b = fit_to_budget(full, llama_7b_gemms, probe, 1e-9);
  EXPECT_EQ(b.shapes.repetitions, 1);
  EXPECT_EQ(b.shapes.attention_tokens, (std::vector<int>{64, 128, 256}));
  EXPECT_EQ(b.shapes.gemm_rows, (std::vector<int>{16, 64, 256}));
  EXPECT_FALSE(b.within_budget);
  EXPECT_NE(describe(b, llama_7b_gemms).find("3 attention shapes, 12 GEMM shapes, 1 runs each"),
            std::string::npos)
      << describe(b, llama_7b_gemms);
}

TEST(CalibrationBudget, WhateverTheProbeTheCutSetFitsOrIsTheSmallest) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> exponent(-12, -6);
  for (int trial = 0; trial < 300; ++trial) {
    const ProbeCosts probe{std::pow(10.0, exponent(random)), std::pow(10.0, exponent(random) - 3)};
    const double budget = std::pow(10.0, exponent(random) + 8);
    const BudgetedShapes b = fit_to_budget(CalibrationShapes{}, llama_7b_gemms, probe, budget);
    if (b.within_budget) {
      EXPECT_LE(b.estimate_seconds, budget);
    } else {
      EXPECT_EQ(b.shapes.repetitions, 1);
      EXPECT_EQ(b.shapes.attention_tokens.size(), 3U);
      EXPECT_EQ(b.shapes.gemm_rows.size(), 3U);
    }
    EXPECT_LE(b.estimate_seconds, b.full_seconds);
  }
}

}  // namespace
}  // namespace zb::qualify
