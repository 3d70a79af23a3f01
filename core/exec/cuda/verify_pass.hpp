#pragma once
// The correctness pass of a cuda run (issue 15, item 4; docs/CUDA_BACKEND.md): once, before the timed
// layers and separate from them, the Program runs forward (and backward) on real rows in its own buffers
// (verify_layout.hpp, rank_comm.hpp in its correctness mode, verify_compute.hpp), every rank reads its
// attention outputs back and compares them with the float64 oracle (verify_oracle.hpp), and every rank
// learns every other's verdict. Its buffers are freed before the timed pass allocates its own.
#include <cstdint>
#include <string>

#include "core/config/scenario.hpp"
#include "core/exec/cuda/cuda_options.hpp"
#include "core/exec/cuda/cuda_world.hpp"
#include "core/exec/cuda/nccl_order.hpp"
#include "core/lower/program.hpp"

namespace zb::cuda {

// The line the trace's note carries: "verified on the GPU: …", or "not verified: <why>" when the mode,
// the size (VerifyMode::automatic above kAutomaticVerifyWork) or the Program's shape (verification_blocker)
// leaves it out. Throws zb::Error (runtime, exit 3) naming the element when an output is out of
// tolerance, or the row when a rank's plan gives it K/V rows nothing delivers. Every rank calls it.
[[nodiscard]] std::string run_correctness_pass(const lower::Program& program, const GlobalOrder& order,
                                               CudaWorld& world, const ModelSpec& model,
                                               AttentionKernel kernel, std::uint64_t seed, VerifyMode mode);

}  // namespace zb::cuda
