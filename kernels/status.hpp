#pragma once
// The result of every kernel entry point. Kernels run on hot paths and inside CUDA launch wrappers, so
// they report errors as values instead of throwing; callers in the engine turn a failed Status into the
// project's zb::Error (exit code 3, "runtime") with throw_if_error.
//
// The message always names the argument or the CUDA call that failed and the entry point it came from,
// e.g. "attention_forward: blocks[3].q_row + q_count = 130 exceeds q rows = 128".
#include <string>
#include <string_view>
#include <utility>

namespace zb::kernels {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status success() { return {}; }
  static Status failure(std::string message) {
    Status status;
    status.ok_ = false;
    status.message_ = std::move(message);
    return status;
  }

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  // Empty on success.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  bool ok_ = true;
  std::string message_;
};

// Throws zb::Error with ExitCode::runtime when `status` failed; `context` says what the caller was doing
// (for example "rank 3, attention op 12"), so the message reads "<context>: <status message>".
void throw_if_error(const Status& status, std::string_view context);

}  // namespace zb::kernels
