#pragma once
// The link half of `qualify --backend cuda`: NCCL point-to-point between the launch's GPUs, in the steps
// of the reference backend's link probes (link_probes.hpp) and with their figures:
//   1. p2p-intra: GPU g → g+1 of each node, one pair at a time;
//   2. p2p-rail: GPU g of node n → GPU g of node n+1, one pair at a time (NCCL takes the NIC nearest
//      GPU g, which the cluster's gpu_to_nic names);
//   3. all-rails: every GPU g of node n → node n+1 at once, each pair its own rate;
//   4. routed: node 0 GPU 0 → node 1 GPU 0, split over every NIC through the first GPU mapped to it,
//      forwarded chunk by chunk in rounds (a proxy forwards chunk c while it receives chunk c+1).
// Bandwidth: `bytes` in one ncclSend, timed with CUDA events on the sender's stream from before the send
// to after the receiver's 4-byte acknowledgement, the median of `repetitions` after `warmup`. Latency:
// the mean one-way time of `round_trips` 8-byte ping-pongs. Between steps, a device barrier (every
// stream idle, then an ncclAllReduce of one int), so a step's figures never share a link with another's.
// Every rank of the world calls it with the same arguments; a figure is returned by its sender.
#include <vector>

#include "core/config/scenario.hpp"
#include "core/exec/cuda/cuda_world.hpp"
#include "core/qualify/gpu_sweeps.hpp"
#include "core/qualify/measurement.hpp"
#include "core/qualify/profile_fit.hpp"

namespace zb::qualify::gpu {

[[nodiscard]] std::vector<Measurement> run_gpu_link_probes(cuda::CudaWorld& world, const ClusterSpec& cluster,
                                                           const GpuLinkSweep& sweep);

// Every rank's device idle, then a world ncclAllReduce of one int waited for.
void device_barrier(cuda::CudaWorld& world);

}  // namespace zb::qualify::gpu

namespace zb::qualify::gpu {

// calibrate's link points: one message of each size from `a` to `b` and back (ncclSend/ncclRecv),
// one-way time = half the median round trip after `warmup` round trips. Only a and b move bytes; the
// points are returned on `a` (empty elsewhere). Every rank calls it, and it ends with a device barrier.
[[nodiscard]] std::vector<TransferPoint> message_times(cuda::CudaWorld& world, int a, int b,
                                                       const std::vector<std::int64_t>& sizes, int warmup,
                                                       int repetitions);

}  // namespace zb::qualify::gpu
