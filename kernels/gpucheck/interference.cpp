// zb_gpucheck interference: compute/communication interference on one GPU, for the cost model's
// comm_compute_slowdown = (time of a compute kernel while a communication kernel runs beside it on the
// same GPU) / (its time alone) − 1, and the per-message cost of small transfers.
//
// Compute: cuBLASLt bf16 GEMM 8192³ (and, with cuDNN built in, the cuDNN SDPA causal bf16 forward, 32 heads,
// d 128, 16384 tokens), random bf16 operands uniform in [−1, 1] (kernels/gpucheck/timing.hpp: never zeros).
// A window is kWindowRuns back-to-back launches on stream A between two CUDA events; the figure is the
// MEDIAN over kWindows windows (after one warm-up window) of the window's time / kWindowRuns.
// Communication, on stream B (both streams cudaStreamNonBlocking):
//   - "copy": the comm-like grid-stride copy (comm_copy.cu: 16-byte loads/stores, C CTAs of 512 threads,
//     C in {8, 16, 32}, NCCL's one CTA per channel; 4 loads in flight per thread) of a 512 MiB buffer;
//   - "nccl-sendrecv" (built with nccl.h, libnccl.so.2 found at run time): a 1-rank communicator
//     (ncclCommInitAll over this device), ncclGroupStart; ncclSend to rank 0; ncclRecv from rank 0;
//     ncclGroupEnd of 64 MiB: NCCL's own kernel.
// Overlap: a feeder thread keeps stream B busy with back-to-back comm operations, at most `depth` of them
// queued (about 4 ms of work, so B drains soon after the window), one CUDA event after each; stream A waits
// for B's first operation to finish, then runs the timed window; B is stopped once A's window is over. From
// the events: comm_busy = the fraction of A's window during which a B operation was in flight (1.0: B ran
// the whole window), and the comm's bandwidth inside the window (each operation's bytes weighted by the
// part of it inside the window). GB/s always counts read + write bytes: 2 × the bytes copied (sent).
// Latency: 1000 back-to-back self send/recv pairs (8 B, 1 KiB, 64 KiB, 1 MiB) between two events, after a
// warm-up; the average per pair in µs (launch + complete as a stream sees it: host enqueue cost included
// when it is the bottleneck); the same for the copy kernel with 1 CTA over 8 B.
// Printed (one figure a line, "key=value" fields after the words, a human explanation after " -- "):
//   interference gemm alone m= n= k= ms= tflops=
//   interference copy alone ctas= bytes= ms= GBps=
//   interference gemm with=copy ctas= ms= tflops= slowdown= copy_GBps= comm_busy=
//   interference sdpa alone heads= dim= len= ms= tflops=       | interference sdpa skipped -- <why>
//   interference sdpa with=copy ctas= ms= tflops= slowdown= copy_GBps= comm_busy=
//   interference nccl library=<file> version=<x.y.z>           | interference nccl skipped -- <why>
//   interference nccl-sendrecv alone bytes= ms= GBps=
//   interference gemm with=nccl-sendrecv bytes= ms= tflops= slowdown= comm_GBps= comm_busy=
//   latency nccl-sendrecv bytes= us=
//   latency copy-kernel ctas=1 bytes=8 us=
//   interference summary comm_compute_slowdown= source=nccl-sendrecv|copy-ctas16
// A figure that failed: "interference <what> error <message>" (and exit 1; the others still run).
#include "kernels/gpucheck/interference.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/cuda_gemm.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/timing.hpp"
#ifdef ZB_GPUCHECK_HAVE_CUDNN
#include "kernels/cuda_sdpa.hpp"
#endif
#ifdef ZB_HAVE_NCCL
#include "kernels/gpucheck/nccl_runtime.hpp"
#endif

namespace zb::kernels::gpucheck {

namespace {

constexpr std::int64_t kGemmSize = 8192;
constexpr std::size_t kGemmWorkspace = std::size_t{32} << 20;  // as time_gemm and the executor
constexpr int kSdpaHeads = 32, kSdpaHeadDim = 128;
constexpr std::int64_t kSdpaLength = 16384;
constexpr int kWindowRuns = 20;  // compute launches per timed window
constexpr int kWindows = 5;      // timed windows per figure (the median), after one warm-up window
constexpr std::size_t kCopyBytes = std::size_t{512} << 20;
constexpr std::size_t kNcclBytes = std::size_t{64} << 20;
constexpr int kCommAloneOps = 12;      // comm alone: the median of this many operations, after 3 warm-up
constexpr int kMaxCommOps = 4096;      // a feeder's bound on the operations of one window (2 events each)
constexpr double kQueuedCommMs = 4.0;  // how much comm work the feeder keeps queued on stream B
constexpr int kLatencyWarmup = 50, kLatencyIterations = 1000;

Status cuda_check(cudaError_t error, const std::string& what) {
  return error == cudaSuccess ? Status::success() : Status::failure(what + ": " + cudaGetErrorString(error));
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::ranges::sort(values);
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

class StreamHandle {
 public:
  StreamHandle() = default;
  ~StreamHandle() {
    if (stream_ != nullptr) static_cast<void>(cudaStreamDestroy(stream_));
  }
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  Status create(const std::string& name) {
    return cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                      "cudaStreamCreate(" + name + ")");
  }
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class EventPool {
 public:
  EventPool() = default;
  ~EventPool() {
    for (cudaEvent_t e : events_) static_cast<void>(cudaEventDestroy(e));
  }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  Status create(int count) {
    for (int i = 0; i < count; ++i) {
      cudaEvent_t e = nullptr;
      if (Status st = cuda_check(cudaEventCreate(&e), "cudaEventCreate"); !st) return st;
      events_.push_back(e);
    }
    return Status::success();
  }
  [[nodiscard]] cudaEvent_t operator[](std::size_t i) const noexcept { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

// Milliseconds from `from` to `to` (both recorded and complete).
Status elapsed(cudaEvent_t from, cudaEvent_t to, double& ms) {
  float value = 0;
  if (Status st = cuda_check(cudaEventElapsedTime(&value, from, to), "cudaEventElapsedTime"); !st) return st;
  ms = value;
  return Status::success();
}

// One compute kernel (launched on the given stream) and its FLOPs per launch.
struct Compute {
  std::string name;
  double flops = 0;
  std::function<Status(cudaStream_t)> launch;
};

// One communication operation (launched on the given stream) and the bytes it copies (sends).
struct Comm {
  std::string name;
  std::size_t bytes = 0;
  std::function<Status(cudaStream_t)> launch;
};

// kWindowRuns launches of `compute` on `stream` between two events; milliseconds per launch.
Status compute_window(const Compute& compute, cudaStream_t stream, const EventPool& events,
                      double& per_run_ms) {
  if (Status st = cuda_check(cudaEventRecord(events[0], stream), "cudaEventRecord"); !st) return st;
  for (int i = 0; i < kWindowRuns; ++i)
    if (Status st = compute.launch(stream); !st) return st;
  for (Status st : {cuda_check(cudaEventRecord(events[1], stream), "cudaEventRecord"),
                    cuda_check(cudaStreamSynchronize(stream), compute.name + " window"),
                    elapsed(events[0], events[1], per_run_ms)}) {
    if (!st) return st;
  }
  per_run_ms /= kWindowRuns;
  return Status::success();
}

// The compute kernel alone: the median over kWindows windows (one warm-up window first).
Status compute_alone(const Compute& compute, cudaStream_t stream, const EventPool& events, double& ms) {
  std::vector<double> windows;
  for (int w = 0; w <= kWindows; ++w) {
    double per_run = 0;
    if (Status st = compute_window(compute, stream, events, per_run); !st) return st;
    if (w > 0) windows.push_back(per_run);
  }
  ms = median(windows);
  return Status::success();
}

// The comm operation alone, back to back on `stream` with an event after each: the median operation.
Status comm_alone(const Comm& comm, cudaStream_t stream, const EventPool& events, double& ms) {
  for (int i = 0; i < 3; ++i)
    if (Status st = comm.launch(stream); !st) return st;
  if (Status st = cuda_check(cudaEventRecord(events[0], stream), "cudaEventRecord"); !st) return st;
  for (int i = 0; i < kCommAloneOps; ++i) {
    if (Status st = comm.launch(stream); !st) return st;
    if (Status st =
            cuda_check(cudaEventRecord(events[static_cast<std::size_t>(i) + 1], stream), "cudaEventRecord");
        !st)
      return st;
  }
  if (Status st = cuda_check(cudaStreamSynchronize(stream), comm.name + " alone"); !st) return st;
  std::vector<double> ops;
  for (std::size_t i = 0; i < static_cast<std::size_t>(kCommAloneOps); ++i) {
    double op = 0;
    if (Status st = elapsed(events[i], events[i + 1], op); !st) return st;
    ops.push_back(op);
  }
  ms = median(ops);
  return Status::success();
}

struct OverlapWindow {
  double compute_ms = 0;  // per compute launch
  double comm_gbps = 0;   // 2 × bytes copied / time, inside the window
  double comm_busy = 0;   // fraction of the window with a comm operation in flight
};

// One window of `compute` on stream `a` while a feeder thread keeps `comm` running on stream `b` (see the
// top). `bounds` holds 2 · kMaxCommOps events: one before and one after each comm operation (an idle gap on
// B between two operations, the feeder being late, is then not counted as busy); `marks` two events for
// A's window.
Status overlap_window(const Compute& compute, const Comm& comm, cudaStream_t a, cudaStream_t b, int depth,
                      const EventPool& bounds, const EventPool& marks, OverlapWindow& out) {
  const auto start_of = [](int op) { return 2 * static_cast<std::size_t>(op); };
  const auto end_of = [](int op) { return 2 * static_cast<std::size_t>(op) + 1; };
  int device = 0;
  if (Status st = cuda_check(cudaGetDevice(&device), "cudaGetDevice"); !st) return st;
  std::atomic<int> launched{0};
  std::atomic<bool> stop{false}, feeder_done{false};
  Status feeder_status;
  std::thread feeder([&] {
    Status st = cuda_check(cudaSetDevice(device), "cudaSetDevice (feeder)");
    for (int i = 0; st && i < kMaxCommOps; ++i) {
      if (i >= 2 && stop.load(std::memory_order_acquire)) break;
      // At most `depth` operations in flight: wait for operation i − depth to finish.
      if (i >= depth)
        st = cuda_check(cudaEventSynchronize(bounds[end_of(i - depth)]), comm.name + " (feeder wait)");
      if (st) st = cuda_check(cudaEventRecord(bounds[start_of(i)], b), "cudaEventRecord");
      if (st) st = comm.launch(b);
      if (st) st = cuda_check(cudaEventRecord(bounds[end_of(i)], b), "cudaEventRecord");
      if (st) launched.store(i + 1, std::memory_order_release);
    }
    feeder_status = st;
    feeder_done.store(true, std::memory_order_release);
  });
  // A starts once B's first operation is done (B's next ones are queued behind it by then).
  while (launched.load(std::memory_order_acquire) < 1 && !feeder_done.load(std::memory_order_acquire))
    std::this_thread::yield();
  Status st = launched.load(std::memory_order_acquire) >= 1
                  ? cuda_check(cudaStreamWaitEvent(a, bounds[end_of(0)], 0), "cudaStreamWaitEvent")
                  : Status::failure(comm.name + ": the feeder launched nothing");
  if (st) st = cuda_check(cudaEventRecord(marks[0], a), "cudaEventRecord");
  for (int i = 0; st && i < kWindowRuns; ++i) st = compute.launch(a);
  if (st) st = cuda_check(cudaEventRecord(marks[1], a), "cudaEventRecord");
  if (st) st = cuda_check(cudaEventSynchronize(marks[1]), compute.name + " window");
  stop.store(true, std::memory_order_release);
  feeder.join();
  const Status drained = cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after " + comm.name);
  for (const Status& s : {st, feeder_status, drained})
    if (!s) return s;
  // Every time from bounds[0], which precedes everything else recorded in this window.
  double a0 = 0, a1 = 0;
  if (Status s = elapsed(bounds[0], marks[0], a0); !s) return s;
  if (Status s = elapsed(bounds[0], marks[1], a1); !s) return s;
  double busy = 0, weighted_bytes = 0;
  const int ops = launched.load();
  for (int i = 0; i < ops; ++i) {
    double begin = 0, end = 0;
    if (Status s = elapsed(bounds[0], bounds[start_of(i)], begin); !s) return s;
    if (Status s = elapsed(bounds[0], bounds[end_of(i)], end); !s) return s;
    const double inside = std::max(0.0, std::min(end, a1) - std::max(begin, a0));
    if (end > begin) weighted_bytes += 2.0 * static_cast<double>(comm.bytes) * inside / (end - begin);
    busy += inside;
  }
  const double window = a1 - a0;
  out.compute_ms = window / kWindowRuns;
  out.comm_busy = window > 0 ? busy / window : 0;
  out.comm_gbps = busy > 0 ? weighted_bytes / (busy * 1e-3) / 1e9 : 0;
  return Status::success();
}

struct Overlap {
  double compute_ms = 0, comm_gbps = 0, comm_busy = 0;
};

// kWindows overlap windows (after one warm-up window): the medians, and the smallest comm_busy.
Status overlap(const Compute& compute, const Comm& comm, double comm_alone_ms, cudaStream_t a, cudaStream_t b,
               const EventPool& bounds, const EventPool& marks, Overlap& out) {
  const int depth = std::clamp(static_cast<int>(kQueuedCommMs / std::max(comm_alone_ms, 1e-3)) + 1, 2, 512);
  std::vector<double> compute_ms, gbps;
  out.comm_busy = 1;
  for (int w = 0; w <= kWindows; ++w) {
    OverlapWindow window;
    if (Status st = overlap_window(compute, comm, a, b, depth, bounds, marks, window); !st) return st;
    if (w == 0) continue;
    compute_ms.push_back(window.compute_ms);
    gbps.push_back(window.comm_gbps);
    out.comm_busy = std::min(out.comm_busy, window.comm_busy);
  }
  out.compute_ms = median(compute_ms);
  out.comm_gbps = median(gbps);
  return Status::success();
}

// Average microseconds per `launch` over kLatencyIterations back-to-back launches between two events.
Status latency_us(const std::function<Status(cudaStream_t)>& launch, cudaStream_t stream,
                  const EventPool& marks, double& us) {
  for (int i = 0; i < kLatencyWarmup; ++i)
    if (Status st = launch(stream); !st) return st;
  if (Status st = cuda_check(cudaEventRecord(marks[0], stream), "cudaEventRecord"); !st) return st;
  for (int i = 0; i < kLatencyIterations; ++i)
    if (Status st = launch(stream); !st) return st;
  double ms = 0;
  for (Status st :
       {cuda_check(cudaEventRecord(marks[1], stream), "cudaEventRecord"),
        cuda_check(cudaStreamSynchronize(stream), "latency loop"), elapsed(marks[0], marks[1], ms)}) {
    if (!st) return st;
  }
  us = ms * 1e3 / kLatencyIterations;
  return Status::success();
}

double gbps(std::size_t bytes, double ms) {
  return ms > 0 ? 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0;
}
double tflops(double flops, double ms) {
  return ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0;
}

struct Run {
  int failures = 0;
  StreamHandle a, b;
  EventPool marks, bounds;

  void error(const std::string& what, const Status& st) {
    std::printf("interference %s error %s\n", what.c_str(), st.message().c_str());
    std::fflush(stdout);
    ++failures;
  }
};

void print_overlap(const char* compute, const std::string& with, const Overlap& o, double alone_ms,
                   double flops, const char* comm_key) {
  std::printf(
      "interference %s %s ms=%.4f tflops=%.1f slowdown=%.4f %s=%.1f comm_busy=%.3f -- %s per launch while "
      "the comm kernel ran on another stream (median of %d windows of %d back-to-back launches); slowdown = "
      "ms / alone ms - 1; %s counts read + write (2 x copied bytes) inside the window; comm_busy = share "
      "of the window with a comm operation in flight (lowest window)\n",
      compute, with.c_str(), o.compute_ms, tflops(flops, o.compute_ms), o.compute_ms / alone_ms - 1.0,
      comm_key, o.comm_gbps, o.comm_busy, compute, kWindows, kWindowRuns, comm_key);
  std::fflush(stdout);
}

// The copy kernel's comm operations over one 512 MiB buffer pair, for each CTA count.
struct CopyBuffers {
  DeviceBuffer src, dst;
};

#ifdef ZB_HAVE_NCCL
struct NcclComm {
  const NcclApi* api = nullptr;
  ncclComm_t comm = nullptr;
  ~NcclComm() {
    if (comm != nullptr) static_cast<void>(api->comm_destroy(comm));
  }
};

// ncclGroupStart; ncclSend(to rank 0); ncclRecv(from rank 0); ncclGroupEnd of `bytes` on `stream`.
Status self_send_recv(const NcclApi& api, ncclComm_t comm, const void* send, void* recv, std::size_t bytes,
                      cudaStream_t stream) {
  if (Status st = api.check(api.group_start(), "ncclGroupStart"); !st) return st;
  const ncclResult_t sent = api.send(send, bytes, ncclInt8, 0, comm, stream);
  const ncclResult_t received = sent == ncclSuccess ? api.recv(recv, bytes, ncclInt8, 0, comm, stream) : sent;
  const ncclResult_t ended = api.group_end();
  if (Status st = api.check(sent, "ncclSend"); !st) return st;
  if (Status st = api.check(received, "ncclRecv"); !st) return st;
  return api.check(ended, "ncclGroupEnd");
}

// The NCCL part: GEMM under a real NCCL kernel, and the small messages' latency. The slowdown measured,
// if any, goes to `slowdown`.
void run_nccl(Run& run, const Compute& gemm, double gemm_alone_ms, std::optional<double>& slowdown) {
  static NcclApi api;
  if (Status st = load_nccl(api); !st) {
    std::printf("interference nccl skipped -- NCCL not available at run time: %s\n", st.message().c_str());
    std::fflush(stdout);
    return;
  }
  std::printf("interference nccl library=%s version=%d.%d.%d -- the libnccl loaded at run time (dlopen)\n",
              api.library.c_str(), api.version / 10000, (api.version % 10000) / 100, api.version % 100);
  std::fflush(stdout);
  int device = 0;
  NcclComm comm;
  comm.api = &api;
  if (Status st = cuda_check(cudaGetDevice(&device), "cudaGetDevice"); !st) return run.error("nccl", st);
  ncclComm_t created = nullptr;
  if (Status st = api.check(api.comm_init_all(&created, 1, &device), "ncclCommInitAll (1 rank)"); !st)
    return run.error("nccl", st);
  comm.comm = created;
  DeviceBuffer send, recv;
  for (Status st : {send.allocate(kNcclBytes, "nccl send"), recv.allocate(kNcclBytes, "nccl recv"),
                    fill_uniform_bf16(send, 4242, "nccl send")}) {
    if (!st) return run.error("nccl", st);
  }
  const Comm sendrecv{"nccl-sendrecv", kNcclBytes, [&](cudaStream_t s) {
                        return self_send_recv(api, comm.comm, send.get(), recv.get(), kNcclBytes, s);
                      }};
  double alone_ms = 0;
  if (Status st = comm_alone(sendrecv, run.b.get(), run.bounds, alone_ms); !st)
    return run.error("nccl-sendrecv alone", st);
  std::printf(
      "interference nccl-sendrecv alone bytes=%zu ms=%.4f GBps=%.1f -- one 1-rank self ncclSend+ncclRecv "
      "group of %zu bytes alone (median of %d); GB/s counts read + write (2 x bytes sent)\n",
      kNcclBytes, alone_ms, gbps(kNcclBytes, alone_ms), kNcclBytes, kCommAloneOps);
  std::fflush(stdout);
  Overlap o;
  if (Status st = overlap(gemm, sendrecv, alone_ms, run.a.get(), run.b.get(), run.bounds, run.marks, o);
      !st) {
    run.error("gemm with=nccl-sendrecv", st);
  } else {
    print_overlap("gemm", "with=nccl-sendrecv bytes=" + std::to_string(kNcclBytes), o, gemm_alone_ms,
                  gemm.flops, "comm_GBps");
    slowdown = o.compute_ms / gemm_alone_ms - 1.0;
  }
  for (std::size_t bytes :
       {std::size_t{8}, std::size_t{1} << 10, std::size_t{64} << 10, std::size_t{1} << 20}) {
    double us = 0;
    if (Status st = latency_us(
            [&](cudaStream_t s) { return self_send_recv(api, comm.comm, send.get(), recv.get(), bytes, s); },
            run.b.get(), run.marks, us);
        !st) {
      run.error("latency nccl-sendrecv bytes=" + std::to_string(bytes), st);
      continue;
    }
    std::printf(
        "latency nccl-sendrecv bytes=%zu us=%.2f -- average of %d back-to-back 1-rank self send/recv groups "
        "on one stream, between two events (launch + complete)\n",
        bytes, us, kLatencyIterations);
    std::fflush(stdout);
  }
}
#endif

}  // namespace

int run_interference() {
  Run run;
  for (Status st :
       {run.a.create("A"), run.b.create("B"), run.marks.create(2), run.bounds.create(2 * kMaxCommOps)}) {
    if (!st) {
      run.error("setup", st);
      return 1;
    }
  }

  // 1. GEMM alone.
  cuda::GemmPlan plan;
  DeviceBuffer ga, gb, gcc, workspace;
  const auto gemm_bytes = static_cast<std::size_t>(kGemmSize * kGemmSize) * 2;
  for (Status st :
       {plan.build(kGemmSize, kGemmSize, kGemmSize, cuda::ElementType::bf16, false, false, kGemmWorkspace),
        ga.allocate(gemm_bytes, "a"), gb.allocate(gemm_bytes, "b"), gcc.allocate(gemm_bytes, "c"),
        fill_uniform_bf16(ga, 1000, "a"), fill_uniform_bf16(gb, 1001, "b")}) {
    if (!st) {
      run.error("gemm alone", st);
      return 1;
    }
  }
  if (Status st = workspace.allocate(plan.workspace_bytes(), "workspace"); !st) {
    run.error("gemm alone", st);
    return 1;
  }
  const Compute gemm{"gemm", plan.flops(), [&](cudaStream_t s) {
                       return cuda::gemm(plan, ga.get(), gb.get(), gcc.get(), workspace.get(), false, s);
                     }};
  double gemm_ms = 0;
  if (Status st = compute_alone(gemm, run.a.get(), run.marks, gemm_ms); !st) {
    run.error("gemm alone", st);
    return 1;
  }
  std::printf(
      "interference gemm alone m=%lld n=%lld k=%lld ms=%.4f tflops=%.1f -- cuBLASLt bf16 GEMM per launch, "
      "nothing else on the GPU (median of %d windows of %d back-to-back launches on one stream)\n",
      static_cast<long long>(kGemmSize), static_cast<long long>(kGemmSize), static_cast<long long>(kGemmSize),
      gemm_ms, tflops(gemm.flops, gemm_ms), kWindows, kWindowRuns);
  std::fflush(stdout);

  // 2. and 3. The copy kernel alone and beside the GEMM, per CTA count.
  CopyBuffers copy;
  for (Status st : {copy.src.allocate(kCopyBytes, "copy src"), copy.dst.allocate(kCopyBytes, "copy dst"),
                    fill_uniform_bf16(copy.src, 77, "copy src")}) {
    if (!st) {
      run.error("copy", st);
      return 1;
    }
  }
  const auto copy_comm = [&](int ctas) {
    return Comm{"copy ctas=" + std::to_string(ctas), kCopyBytes, [&copy, ctas](cudaStream_t s) {
                  return cuda_check(launch_comm_copy(copy.src.get(), copy.dst.get(), kCopyBytes, ctas, s),
                                    "comm copy kernel launch");
                }};
  };
  std::vector<std::pair<int, double>> copy_alone;  // (ctas, ms)
  std::optional<double> copy16_slowdown, nccl_slowdown;
  for (int ctas : {8, 16, 32}) {
    const Comm c = copy_comm(ctas);
    double ms = 0;
    if (Status st = comm_alone(c, run.b.get(), run.bounds, ms); !st) {
      run.error("copy alone ctas=" + std::to_string(ctas), st);
      continue;
    }
    copy_alone.emplace_back(ctas, ms);
    std::printf(
        "interference copy alone ctas=%d bytes=%zu ms=%.4f GBps=%.1f -- grid-stride 16-byte copy kernel, %d "
        "CTAs "
        "of %d threads, nothing else on the GPU (median of %d copies); GB/s counts read + write (2 x copied "
        "bytes)\n",
        ctas, kCopyBytes, ms, gbps(kCopyBytes, ms), ctas, kCommCopyThreads, kCommAloneOps);
    std::fflush(stdout);
    Overlap o;
    if (Status st = overlap(gemm, c, ms, run.a.get(), run.b.get(), run.bounds, run.marks, o); !st) {
      run.error("gemm with=copy ctas=" + std::to_string(ctas), st);
      continue;
    }
    print_overlap("gemm", "with=copy ctas=" + std::to_string(ctas), o, gemm_ms, gemm.flops, "copy_GBps");
    if (ctas == 16) copy16_slowdown = o.compute_ms / gemm_ms - 1.0;
  }

  // 4. cuDNN SDPA beside the copy kernel.
#ifdef ZB_GPUCHECK_HAVE_CUDNN
  [&] {
    const AttentionShape shape{kSdpaHeads, kSdpaHeads, kSdpaHeadDim, kSdpaLength, kSdpaLength, kSdpaLength};
    const std::vector<AttentionBlockDesc> blocks{
        {0, kSdpaLength, 0, kSdpaLength, 0, 0, AttentionMask::causal, 0}};
    const auto elements = static_cast<std::size_t>(kSdpaLength) * kSdpaHeads * kSdpaHeadDim;
    cuda::SdpaPlan sdpa;
    DeviceBuffer q, k, v, o, lse, sdpa_workspace;
    if (Status st = sdpa.build(shape, blocks, cuda::ElementType::bf16, false); !st)
      return run.error("sdpa alone", st);
    for (Status st :
         {q.allocate(elements * 2, "q"), k.allocate(elements * 2, "k"), v.allocate(elements * 2, "v"),
          o.allocate(elements * 2, "o"),
          lse.allocate(static_cast<std::size_t>(kSdpaLength) * kSdpaHeads * 4, "lse"),
          sdpa_workspace.allocate(sdpa.workspace_bytes(), "workspace"), fill_uniform_bf16(q, 42, "q"),
          fill_uniform_bf16(k, 43, "k"), fill_uniform_bf16(v, 44, "v")}) {
      if (!st) return run.error("sdpa alone", st);
    }
    const cuda::SdpaForwardTensors tensors{
        q.get(), k.get(), v.get(), o.get(), static_cast<float*>(lse.get()), sdpa_workspace.get()};
    const Compute forward{"sdpa",
                          4.0 * static_cast<double>(kSdpaLength) * static_cast<double>(kSdpaLength) *
                              kSdpaHeads * kSdpaHeadDim / 2.0,
                          [&](cudaStream_t s) { return cuda::sdpa_forward(sdpa, tensors, s); }};
    double ms = 0;
    if (Status st = compute_alone(forward, run.a.get(), run.marks, ms); !st)
      return run.error("sdpa alone", st);
    std::printf(
        "interference sdpa alone heads=%d dim=%d len=%lld ms=%.4f tflops=%.1f -- cuDNN SDPA causal bf16 "
        "forward "
        "per launch, nothing else on the GPU (median of %d windows of %d back-to-back launches)\n",
        kSdpaHeads, kSdpaHeadDim, static_cast<long long>(kSdpaLength), ms, tflops(forward.flops, ms),
        kWindows, kWindowRuns);
    std::fflush(stdout);
    for (const auto& [ctas, copy_ms] : copy_alone) {
      if (ctas == 8) continue;
      Overlap ov;
      if (Status st =
              overlap(forward, copy_comm(ctas), copy_ms, run.a.get(), run.b.get(), run.bounds, run.marks, ov);
          !st) {
        run.error("sdpa with=copy ctas=" + std::to_string(ctas), st);
        continue;
      }
      print_overlap("sdpa", "with=copy ctas=" + std::to_string(ctas), ov, ms, forward.flops, "copy_GBps");
    }
  }();
#else
  std::printf("interference sdpa skipped -- built without cudnn-frontend: no cuDNN SDPA to overlap\n");
#endif

  // 5. A real NCCL kernel, and the small messages' cost.
#ifdef ZB_HAVE_NCCL
  run_nccl(run, gemm, gemm_ms, nccl_slowdown);
#else
  std::printf(
      "interference nccl skipped -- built without nccl.h (kernels/cmake/ZbNccl.cmake): no NCCL figures\n");
#endif
  {
    double us = 0;
    if (Status st = latency_us(
            [&](cudaStream_t s) {
              return cuda_check(launch_comm_copy(copy.src.get(), copy.dst.get(), 8, 1, s),
                                "comm copy kernel launch");
            },
            run.b.get(), run.marks, us);
        !st) {
      run.error("latency copy-kernel", st);
    } else {
      std::printf(
          "latency copy-kernel ctas=1 bytes=8 us=%.2f -- average of %d back-to-back launches of the copy "
          "kernel "
          "(1 CTA, 8 bytes) on one stream, between two events (launch + complete)\n",
          us, kLatencyIterations);
    }
  }

  if (nccl_slowdown || copy16_slowdown) {
    std::printf(
        "interference summary comm_compute_slowdown=%.4f source=%s -- GEMM time beside the comm kernel / "
        "alone "
        "- 1 (NCCL's own kernel when measured, else the copy kernel with 16 CTAs)\n",
        nccl_slowdown ? *nccl_slowdown : *copy16_slowdown, nccl_slowdown ? "nccl-sendrecv" : "copy-ctas16");
  } else {
    std::printf("interference summary error no GEMM slowdown was measured\n");
    ++run.failures;
  }
  std::fflush(stdout);
  return run.failures == 0 ? 0 : 1;
}

}  // namespace zb::kernels::gpucheck
