#include "core/config/backend_names.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace zb {
namespace {

// Written only by register_backend_name during static initialisation (one thread, before main),
// read-only afterwards; `sealed` is set by the first read, so a late registration fails loudly instead
// of two reads seeing different lists.
struct Names {
  std::vector<std::pair<int, std::string>> by_order;
  std::vector<std::string> names;
  std::atomic<bool> sealed{false};
};

// Constructed on first use: a backend's registration may run before this file's statics exist.
Names& the_names() {
  static Names names;
  return names;
}

// A registration error is a programming error found before main: no Error (nobody could catch it).
[[noreturn]] void registration_failed(const std::string& what) {
  std::fprintf(stderr, "zeppelin-bench: backend names: %s\n", what.c_str());
  std::abort();
}

}  // namespace

void register_backend_name(const std::string& name, int order) {
  Names& names = the_names();
  if (names.sealed.load())
    registration_failed("\"" + name + "\" was registered after the list was first read");
  for (const auto& entry : names.by_order) {
    if (entry.second == name) registration_failed("\"" + name + "\" registered twice");
  }
  const auto at = std::upper_bound(names.by_order.begin(), names.by_order.end(), order,
                                   [](int o, const std::pair<int, std::string>& e) { return o < e.first; });
  names.by_order.insert(at, {order, name});
  names.names.clear();
  for (const auto& entry : names.by_order) names.names.push_back(entry.second);
}

const std::vector<std::string>& backend_names() {
  Names& names = the_names();
  names.sealed.store(true);
  return names.names;
}

}  // namespace zb
