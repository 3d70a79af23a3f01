#pragma once
// A rank's result (trace events and verification record) as bytes, so that under MPI every process
// can assemble the same Trace and report the same verdict as the in-process run.
#include "core/exec/reference/rank_runner.hpp"

namespace zb::reference {

[[nodiscard]] Bytes encode_result(const RankResult& result);
[[nodiscard]] RankResult decode_result(const Bytes& bytes);

}  // namespace zb::reference
