#pragma once
// The exit rule of a measured backend (reference, cuda) when nothing was measured: a run in which no
// system executed any iteration (every plan out of GPU memory, in every iteration) has no figure to
// report, so it must not end like a measurement (exit 0, a summary headed "measured on GPUs"). On the sim
// backend an out-of-memory system is a result like any other (exit 0).
#include <string>

#include "core/run/run_result.hpp"

namespace zb {

// Why `result` measured nothing, for the error (exit 3) that ends the run: the backend and, per system,
// in how many iterations it did not fit, with its first out-of-memory report. Empty when the backend is
// sim or any system ran at least one iteration.
[[nodiscard]] std::string nothing_measured(const RunResult& result);

}  // namespace zb
