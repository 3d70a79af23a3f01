#pragma once
// The one error type of zeppelin-bench. It carries what was wrong and where (file, JSON path, line and
// column, rank), and which exit code the CLI maps it to (DESIGN §8). Several problems can travel in one
// Error so that validation reports everything it found at once.
#include <exception>
#include <string>
#include <vector>

namespace zb {

enum class ExitCode : int {
  ok = 0,
  check_failed = 1,  // a gate or a comparison failed
  bad_input = 2,     // scenario, file or flag is wrong: the user must fix the input
  runtime = 3,       // the run itself failed (executor, transport, I/O)
};

// Where a problem is. Every field is optional; str() prints only the ones that are set.
struct Location {
  std::string file;
  std::string json_path;  // dotted with indices: cluster.nic.bandwidth, systems[2].degree
  int line = 0;           // 1-based; 0 = unknown
  int column = 0;         // 1-based; 0 = unknown
  int rank = -1;          // -1 = not rank-specific

  [[nodiscard]] std::string str() const;
};

struct Problem {
  Location where;
  std::string what;  // what is wrong
  std::string hint;  // what to do about it (may be empty)

  [[nodiscard]] std::string str() const;
};

class Error : public std::exception {
 public:
  Error(ExitCode code, std::vector<Problem> problems);
  Error(ExitCode code, Location where, std::string what, std::string hint = {});

  [[nodiscard]] ExitCode code() const noexcept { return code_; }
  [[nodiscard]] const std::vector<Problem>& problems() const noexcept { return problems_; }
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

 private:
  ExitCode code_;
  std::vector<Problem> problems_;
  std::string message_;
};

// Shorthands for the two common kinds.
[[noreturn]] void throw_input_error(Location where, std::string what, std::string hint = {});
[[noreturn]] void throw_runtime_error(Location where, std::string what, std::string hint = {});

// Collects problems while validating, then throws them together (exit code 2) if there were any.
class ProblemList {
 public:
  void add(Location where, std::string what, std::string hint = {});
  [[nodiscard]] bool empty() const noexcept { return problems_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return problems_.size(); }
  void throw_if_any() const;

 private:
  std::vector<Problem> problems_;
};

}  // namespace zb
