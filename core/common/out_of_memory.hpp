#pragma once
// Out of memory as an error the user can act on: what was being done when an allocation failed, and how
// much memory the process was allowed (its address-space limit, `ulimit -v` or a batch system's memory
// request), instead of a bare "std::bad_alloc" or, under mimalloc, a silent abort (throwing_new.cpp).
// Exit code 3: the input is not wrong, the machine is too small for it.
#include <cstdint>
#include <optional>
#include <string>

#include "core/common/error.hpp"

namespace zb {

// This process's address-space limit in bytes (RLIMIT_AS, soft), or nothing when it is unlimited.
[[nodiscard]] std::optional<std::uint64_t> address_space_limit();

// "out of memory while <activity>; <who> needs more than the 2.9 GiB this process may use", with a
// hint on what to do. Without a limit it names the machine's physical memory instead.
[[nodiscard]] Error out_of_memory_error(const std::string& activity, const std::string& who = "the scenario");

}  // namespace zb
