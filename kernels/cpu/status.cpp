// Status → zb::Error: the bridge between the kernels' error values and the engine's exceptions.
#include "kernels/status.hpp"

#include <string>

#include "core/common/error.hpp"

namespace zb::kernels {

void throw_if_error(const Status& status, std::string_view context) {
  if (status.ok()) return;
  std::string what(context);
  if (!what.empty()) what += ": ";
  what += status.message();
  throw_runtime_error(Location{}, std::move(what));
}

}  // namespace zb::kernels
