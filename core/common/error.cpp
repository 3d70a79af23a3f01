#include "core/common/error.hpp"

#include <utility>

namespace zb {

std::string Location::str() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  if (!json_path.empty()) {
    if (!out.empty()) out += ": ";
    out += json_path;
  }
  if (rank >= 0) {
    if (!out.empty()) out += ": ";
    out += "rank " + std::to_string(rank);
  }
  return out;
}

std::string Problem::str() const {
  std::string where_text = where.str();
  std::string out = where_text.empty() ? what : where_text + ": " + what;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}

static std::string join_problems(const std::vector<Problem>& problems) {
  std::string out;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i > 0) out += "\n";
    out += problems[i].str();
  }
  return out;
}

Error::Error(ExitCode code, std::vector<Problem> problems)
    : code_(code), problems_(std::move(problems)), message_(join_problems(problems_)) {}

Error::Error(ExitCode code, Location where, std::string what, std::string hint)
    : Error(code, std::vector<Problem>{Problem{std::move(where), std::move(what), std::move(hint)}}) {}

void throw_input_error(Location where, std::string what, std::string hint) {
  throw Error(ExitCode::bad_input, std::move(where), std::move(what), std::move(hint));
}

void throw_runtime_error(Location where, std::string what, std::string hint) {
  throw Error(ExitCode::runtime, std::move(where), std::move(what), std::move(hint));
}

void ProblemList::add(Location where, std::string what, std::string hint) {
  problems_.push_back(Problem{std::move(where), std::move(what), std::move(hint)});
}

void ProblemList::throw_if_any() const {
  if (!problems_.empty()) throw Error(ExitCode::bad_input, problems_);
}

}  // namespace zb
