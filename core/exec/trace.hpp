#pragma once
// The Trace: what one executor observed while running one iteration of a Plan. Every backend fills the
// same struct; metrics (core/metrics) and reporters read only this, never the backend.
//
// Time axis. An iteration is `layers` identical layers, forward then backward. A trace records ONE
// representative layer of each pass on one axis: the forward layer runs in [0, layer.forward), the
// backward layer in [layer.forward, layer.forward + layer.backward). Whole-iteration figures multiply by
// `layers` (iteration_seconds = layers · (forward + backward)); the sim backend documents why that is
// exact for it (docs/SIMULATOR.md). A forward-only run has layer.backward = 0 and no bwd events.
//
// Determinism: a backend that promises "same plan, same trace" fills every vector in a fixed order
// (events by (pass, rank, track, start, op index); links in platform order), never from hash-map iteration.
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/token_layout.hpp"
#include "core/lower/program.hpp"

namespace zb {

// The timeline row an event belongs to. compute: the GPU's compute stream (attention, GEMMs). comm: the
// rank's own transfers (send, recv, remap). nic: relay legs a rank carries for others (routing proxies), one
// track per rank.
enum class Track { compute, comm, nic };
// tensor_parallel: a collective over hidden rows that names no CP group (tensor parallelism's sequence-
// parallel all-gather or reduce-scatter); collective: any other (e.g. a K/V all-gather of a CP group).
enum class EventCategory {
  attention,
  gemm,
  send,
  recv,
  remap,
  route_dispatch,
  route_nic,
  route_combine,
  collective,
  tensor_parallel
};
enum class LinkKind { nvlink_out, nvlink_in, nic_tx, nic_rx, pcie, core };

struct TraceEvent {
  int rank = 0;
  Track track = Track::compute;
  std::string name;  // the op's name ("attn g3 s2", "send g3 s2 → 9", ...)
  EventCategory category = EventCategory::attention;
  Pass pass = Pass::fwd;
  int micro_batch = 0;
  double start = 0;  // seconds on the trace axis (see above)
  double end = 0;
  double bytes = 0;  // transfers: bytes carried by this event (one message: K/V, dK/dV, remap rows)
  double flops = 0;  // compute: FLOPs of this kernel (attention or GEMM, this pass)
  // compute: seconds the kernel lost to communication on its GPU (sim's interference, docs/SIMULATOR.md):
  // its duration less its cost-model time; 0 on measured backends and with interference off.
  double interference_seconds = 0;
  int op = -1;     // index of the op in the rank's op list, −1 for relay legs
  int peer = -1;   // transfers: the other end (destination of a send, source of a recv/leg)
  int group = -1;  // CP group (attention, send, recv)
  int step = -1;   // ring step (attention, send, recv)
};

// Aggregate rate through one link, piecewise constant: `bytes_per_second` holds from `t` until the next
// point's t (the last point is always a 0 rate). Points are strictly increasing in t.
struct LoadPoint {
  double t = 0;
  double bytes_per_second = 0;
};

struct LinkLoad {
  std::string name;  // platform name, e.g. "n1-nic3-tx", "n0-gpu2-nvl-out", "core"
  LinkKind kind = LinkKind::nic_tx;
  int node = -1;         // −1 for the core
  int index = -1;        // local GPU index (nvlink, pcie) or local NIC index (nic); −1 for the core
  double bandwidth = 0;  // nominal bytes/s (before the p2p efficiency)
  std::vector<LoadPoint> series;
  double bytes = 0;         // integral of the series over the trace (one layer fwd + bwd)
  double busy_seconds = 0;  // time with a non-zero rate
  // Measured runs: sampled from the NIC's byte counters (core/exec/nic), not simulated. Such a NIC's
  // `bytes` is what the counters moved while the layer ran (frames with their headers), and
  // `expected_bytes` what the Program's transfers put on it by the run's own routing, so the two can be
  // compared; −1 where the executor cannot say.
  bool measured = false;
  double expected_bytes = -1;
};

// One ring-step KV transfer (one hop: a group member passing KV to its neighbour at one step): from
// the first byte the sender puts out to the last byte the receiver gets, routing legs (dispatch, NIC,
// combine) included. `level` is what the hop itself crosses (inter_node when sender and receiver are
// on different nodes, intra_node otherwise), so a ring over two nodes has mostly intra-node hops and
// two inter-node ones per step; `group_level` is the level of the CP group it belongs to.
struct RingStepTransfer {
  int group = -1;
  int step = -1;
  layout::Level level = layout::Level::intra_node;
  layout::Level group_level = layout::Level::intra_node;
  Pass pass = Pass::fwd;
  int micro_batch = 0;
  int src = -1;
  int dst = -1;
  double bytes = 0;
  double start = 0;
  double end = 0;
  [[nodiscard]] double seconds() const { return end - start; }
};

// What a GPU itself ran, from CUPTI's activity records (the cuda backend): kernels (NCCL's apart),
// memory copies and memsets, per CUDA stream, on the trace axis. Measured by the device, next to the
// executor's own item events, which every figure is computed from: metrics never read these; the
// Perfetto trace draws them on one track per rank and CUDA stream.
enum class DeviceActivityKind { kernel, nccl_kernel, memcpy, memset };

struct DeviceActivity {
  int rank = 0;
  std::uint32_t cuda_stream = 0;  // CUPTI's stream id, unique within the rank's CUDA context
  DeviceActivityKind kind = DeviceActivityKind::kernel;
  std::string name;       // kernels: the demangled name; copies: "memcpy DtoD"; "memset"
  std::string copy_kind;  // memcpy: "HtoD", "DtoH", "DtoD", "PtoP", ...; empty otherwise
  Pass pass = Pass::fwd;
  double start = 0;  // seconds on the trace axis
  double end = 0;
  double bytes = 0;  // memcpy, memset
  int device = -1;
  std::uint32_t correlation = 0;  // CUPTI's id of the API call that launched it
};

// Statistics of RingStepTransfer::seconds() over every transfer of one (hop) level and pass.
struct RingStepStats {
  layout::Level level = layout::Level::intra_node;
  Pass pass = Pass::fwd;
  int count = 0;
  double mean_seconds = 0;
  double p50_seconds = 0;
  double max_seconds = 0;
};

struct LayerTimes {
  double forward = 0;   // one layer's forward makespan (all ranks)
  double backward = 0;  // one layer's backward makespan; 0 for a forward-only run
};

struct Trace {
  std::string backend;            // "sim", "reference", "cuda"
  std::string simulator_version;  // "SimGrid 3.32" for sim; empty otherwise
  std::string model_note;         // how times were obtained, one line for reports
  // What the executor computed in place of the scenario's model, when it did (the reference backend's
  // small attention dims and capped GEMMs, float32 for a bf16 model): its times are then not those of the
  // work the cost model prices, and no simulation ratio is reported. Empty when it ran the model itself.
  std::string stand_in;
  int world_size = 0;
  int gpus_per_node = 0;
  int nics_per_node = 0;
  int layers = 0;
  bool backward = false;  // whether the backward pass was run

  std::vector<TraceEvent> events;
  std::vector<LinkLoad> links;
  std::vector<RingStepTransfer> ring_steps;
  std::vector<RingStepStats> ring_step_stats;   // per (level, pass) that occurs, level order then pass
  std::vector<DeviceActivity> device_activity;  // cuda backend with CUPTI: (pass, rank, stream, start) order
  LayerTimes layer;
  double iteration_seconds = 0;  // layers · (layer.forward + layer.backward)

  [[nodiscard]] double trace_seconds() const { return layer.forward + layer.backward; }
};

// Bytes through `link` in each of `bins` equal bins of [t0, t1) (exact integral of the series).
[[nodiscard]] std::vector<double> binned_bytes(const LinkLoad& link, double t0, double t1, int bins);
// What every backend does alike with its trace (the executors' shared runtime):
// Orders the events by (pass, rank, track, start, op), ties in emission order (the trace's one event
// order, whatever the backend).
void sort_trace_events(std::vector<TraceEvent>& events);
// Whether a message is a ring step's hop: K/V (or dK/dV) of a CP group at one of its steps. Every backend
// records one RingStepTransfer for each such message it moved, from its first byte out to its last in.
[[nodiscard]] bool is_ring_step(const lower::Message& message);
// The ring-step record of K/V (or dK/dV) message `message` of `program`, moved over [start, end].
[[nodiscard]] RingStepTransfer ring_step_transfer(const lower::Program& program, int message, double start,
                                                  double end);
// Statistics per (level, pass) over `transfers`, in level order then pass order.
[[nodiscard]] std::vector<RingStepStats> ring_step_statistics(const std::vector<RingStepTransfer>& transfers);

[[nodiscard]] const char* to_string(Track s);
[[nodiscard]] const char* to_string(EventCategory c);
[[nodiscard]] const char* to_string(LinkKind k);
[[nodiscard]] const char* to_string(DeviceActivityKind k);

}  // namespace zb
