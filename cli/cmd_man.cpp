// `zeppelin-bench man`: the manual page, zeppelin-bench(1), in troff, written from the same commands and
// options as `--help` (cli/app_outline.hpp), so the two cannot disagree. `man <(zeppelin-bench man)`
// reads it in place; cmake --install writes it to share/man/man1/zeppelin-bench.1.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/app_outline.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "zb/build_info.hpp"

namespace zb::cli {
namespace {

// Text as troff reads it: a backslash is written \e, a hyphen \- (so man does not break or restyle it),
// and a line that would start with '.' or '\'' (a request) is protected with \&.
std::string troff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string option_item(const OptionOutline& o) {
  std::string head;
  if (!o.positional.empty()) {
    head = "\\fI" + troff(o.positional) + "\\fR";
  } else {
    for (const std::string& name : o.names)
      head += (head.empty() ? "" : ", ") + ("\\fB" + troff(name) + "\\fR");
    if (!o.value.empty()) head += " \\fI" + troff(o.value) + "\\fR";
  }
  std::string body = troff(o.description);
  if (!o.choices.empty()) {
    std::string set;
    for (const std::string& c : o.choices) set += (set.empty() ? "" : ", ") + troff(c);
    body += " (one of: " + set + ")";
  }
  return ".TP\n" + head + "\n" + body + "\n";
}

std::string man_page(const AppOutline& app) {
  std::string out = fmt::format(".TH ZEPPELIN\\-BENCH 1 \"\" \"zeppelin\\-bench {}\" \"User Commands\"\n",
                                troff(build::version));
  const std::string summary = app.description.substr(0, app.description.find('\n'));
  out += ".SH NAME\n" + troff(app.name) + " \\- " + troff(summary) + "\n";
  out += ".SH SYNOPSIS\n.B " + troff(app.name) +
         "\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]\n.br\n.B " + troff(app.name) +
         "\n\\fBhelp\\fR [\\fICOMMAND\\fR] | \\fB\\-V\\fR\n";
  out += ".SH DESCRIPTION\n" + troff(app.description) + "\n";
  out +=
      ".PP\nEvery figure a report prints says whether it was simulated or measured, and which hardware "
      "profile produced it.\n";
  out += ".SH COMMANDS\n";
  for (const CommandOutline& c : app.commands) {
    std::string usage = "\\fB" + troff(app.name) + " " + troff(c.name) + "\\fR";
    for (const OptionOutline& o : c.options)
      if (!o.positional.empty()) usage += " \\fI" + troff(o.positional) + "\\fR";
    out += ".SS " + troff(c.name) + "\n" + usage + " [\\fIOPTIONS\\fR]\n.PP\n" + troff(c.description) + ".\n";
    for (const OptionOutline& o : c.options) out += option_item(o);
  }
  out += ".SH EXIT STATUS\n" + troff(app.footer.substr(0, app.footer.find("Scenario file reference"))) + "\n";
  out +=
      ".SH FILES\n.TP\n\\fIshare/zeppelin\\-bench/scenarios/\\fR\nThe scenario library (`list scenarios`).\n"
      ".TP\n\\fIshare/zeppelin\\-bench/docs/\\fR\nSCENARIOS.md (scenario keys), METRICS.md (every printed "
      "figure "
      "and its formula), REPORT_FORMAT.md (report.json, traces, gbench), STRATEGIES.md (the systems "
      "compared).\n";
  out +=
      ".SH SEE ALSO\n\\fBcompare.py\\fR from Google Benchmark's tools (reads \\fIgbench.json\\fR), "
      "\\fBnccl\\-tests\\fR, ui.perfetto.dev (reads the \\fItrace\\-*.json\\fR files)\n";
  return out;
}

}  // namespace

void add_man_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand("man", "Print the manual page, zeppelin-bench(1), in troff");
  command->callback([&app, &status] {
    write_stdout(man_page(outline_of(app)));
    status.code = ExitCode::ok;
  });
}

}  // namespace zb::cli
