// libFuzzer target: the bytes as a plan JSON file, as `run --plan FILE` reads it (JSONC, then the strict
// plan reader). A plan the reader accepts must also print and read back to the same JSON, the property
// plan_format.hpp promises (from_json(to_json(p)) prints as p does), and plan::verify must judge it without
// crashing: the reader checks only that indices name something, verify is what a hand-edited plan meets next.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/config/jsonc.hpp"
#include "core/plan/plan_format.hpp"
#include "core/plan/verify.hpp"
#include "fuzz_support.hpp"

namespace {

constexpr const char* kFile = "fuzz-plan.json";

// Outside accept_input_errors: a printed plan that the reader refuses is a finding, not bad input.
// Both runnable details (compact folds ops into runs, full spells them out).
void expect_round_trip(const zb::plan::Plan& plan) {
  for (const auto detail : {zb::plan::Detail::compact, zb::plan::Detail::full}) {
    const auto printed = zb::plan::to_json(plan, detail);
    const auto reprinted =
        zb::plan::to_json(zb::plan::from_json(nlohmann::json::parse(printed.dump()), kFile), detail);
    if (printed != reprinted) {
      std::fprintf(stderr, "fuzz: the plan does not read back as printed (%s):\n%s\n---\n%s\n",
                   zb::plan::to_string(detail), printed.dump().c_str(), reprinted.dump().c_str());
      std::abort();
    }
  }
  (void)zb::plan::to_text(plan);
}

// As run_plan calls it, less the scenario's token capacity (the plan's own sizes are what is fuzzed).
void expect_verdict(const zb::plan::Plan& plan) {
  (void)zb::plan::verify(plan, {.token_capacity = -1, .max_problems = 6, .heads = 32});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<zb::plan::Plan> plan;
  zb::fuzz::accept_input_errors([&] {
    // A run multiplies ops: cap the expansion so that a mutated `run` count is refused, not a memory
    // finding (the build's own cap, max_plan_ops, is sized for the largest real plans).
    plan = zb::plan::from_json(zb::parse_jsonc(text, kFile, zb::plan::max_plan_file_bytes), kFile,
                               {.max_ops = 1u << 16});
  });
  if (plan) {
    expect_round_trip(*plan);
    expect_verdict(*plan);
  }
  return 0;
}
