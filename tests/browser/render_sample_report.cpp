// Writes the HTML report of the hand-built sample run (tests/unit/reports/sample_run.hpp) for the browser
// test, with a hostile scenario name that the page must show escaped.
// Usage: zb_render_sample_report OUTPUT.html [SCENARIO_NAME]
#include <cstdio>
#include <exception>

#include "reports/html_report.hpp"
#include "tests/unit/reports/sample_run.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.html [SCENARIO_NAME]\n", argv[0]);
    return 2;
  }
  try {
    zb::test::SampleOptions options;
    options.scenario_name = argc > 2 ? argv[2] : "<script>alert(1)</script>";
    const zb::RunResult run = zb::test::sample_run(options);
    zb::reports::write_html_report(run, zb::reports::summarize_run(run), zb::test::fixed_context(), argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
  return 0;
}
