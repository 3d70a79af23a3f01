#pragma once
// lower::verify checks the promises of program.hpp on any Program (a lowered strategy plan, a lowered
// hand-edited plan, or one a test corrupted on purpose): dependencies, send/recv matching and keys,
// collective membership, that each message's last legs deliver all of it, and rendezvous safety: with
// zero send buffering every instruction completes (checked by the shared scheduler, schedule.hpp). Each
// problem names the rank and instruction.
#include <string>
#include <vector>

#include "core/lower/program.hpp"

namespace zb::lower {

[[nodiscard]] std::vector<std::string> verify(const Program& program, std::size_t max_problems = 20);

}  // namespace zb::lower
