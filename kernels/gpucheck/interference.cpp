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
// Comm first ("copy-resident"): the copy kernel, cycling over the buffer until a stop flag in host-mapped
// memory says stop (or 3 s, its own bound), is launched on B; each CTA writes "started" (its SM id) to
// host-mapped memory; once all C have (1 s timeout: an error line, never a hang) the compute window is
// enqueued on A, and the stop flag is set when it ends: the compute kernel meets SMs that a running comm
// kernel already holds, as when NCCL's kernel of a ring step runs when the next compute kernel is launched.
// Baselines: every slowdown is against the mean of the compute alone (median of kWindows windows) measured
// just before and just after that measurement (alone_before_ms, alone_after_ms), so that clock drift cancels;
// the first "alone" figure follows kComputeWarmupRuns warm-up launches. Past kBudget (40 s) the remaining
// optional figures are skipped ("interference <what> skipped").
// Latency: 1000 back-to-back self send/recv pairs (8 B, 1 KiB, 64 KiB, 1 MiB) between two events, after a
// warm-up; the average per pair in µs (launch + complete as a stream sees it: host enqueue cost included
// when it is the bottleneck); the same for the copy kernel with 1 CTA over 8 B.
// Printed (one figure a line, "key=value" fields after the words, a human explanation after " -- "):
//   interference gemm alone m= n= k= ms= tflops=
//   interference copy alone ctas= bytes= ms= GBps=
//   interference gemm with=copy ctas= ms= tflops= slowdown= copy_GBps= comm_busy= alone_before_ms=
//                                                                                   alone_after_ms=
//   interference sdpa alone heads= dim= len= ms= tflops=       | interference sdpa skipped -- <why>
//   interference sdpa with=copy ctas= ms= tflops= slowdown= copy_GBps= comm_busy= alone_before_ms=
//   alone_after_ms= interference nccl library=<file> version=<x.y.z>           | interference nccl skipped --
//   <why> interference nccl-sendrecv alone bytes= ms= GBps= interference gemm with=nccl-sendrecv bytes= ms=
//   tflops= slowdown= comm_GBps= comm_busy= alone_before_ms=
//                                                                                  alone_after_ms=
//   latency nccl-sendrecv bytes= us=
//   latency copy-kernel ctas=1 bytes=8 us=
//   interference summary comm_compute_slowdown= source=nccl-sendrecv|copy-ctas16
//   interference copy-resident alone ctas= ms= GBps= sms=          (C = 8, 16, 32; ms: its whole run)
//   interference gemm with=copy-resident ctas= ms= tflops= slowdown= copy_GBps= comm_busy= sms=
//   alone_before_ms=
//                                                                                           alone_after_ms=
//   interference sdpa with=copy-resident ctas= (the same fields; C = 16, 32; with cuDNN)
//   interference summary-resident comm_compute_slowdown= source=copy-resident-ctas16
//   interference time s=                                           (the subcommand's wall time)
// A figure that failed: "interference <what> error <message>" (and exit 1; the others still run).
#include "kernels/gpucheck/interference.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <set>
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
constexpr int kComputeWarmupRuns = 200;  // ~0.3 s of GEMM before the first "alone" figure: clocks settle
constexpr int kMaxResidentCtas = 64;
constexpr auto kResidentStartTimeout = std::chrono::seconds(1);  // every copy CTA resident by then, or error
constexpr unsigned long long kResidentMaxNs = 3'000'000'000ULL;  // the copy kernel's own stop (no hang)
constexpr auto kResidentAloneTime = std::chrono::milliseconds(20);  // copy-resident alone: its run time
constexpr auto kBudget = std::chrono::seconds(40);  // later optional figures are skipped past this

Status cuda_check(cudaError_t error, const std::string& what) {
  return error == cudaSuccess ? Status::success() : Status::failure(what + ": " + cudaGetErrorString(error));
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

// Host-mapped flags of the resident copy kernel (comm_copy.cu): started[kMaxResidentCtas], then stop.
class MappedFlags {
 public:
  MappedFlags() = default;
  ~MappedFlags() {
    if (host_ != nullptr) static_cast<void>(cudaFreeHost(host_));
  }
  MappedFlags(const MappedFlags&) = delete;
  MappedFlags& operator=(const MappedFlags&) = delete;
  Status create() {
    constexpr std::size_t bytes = (kMaxResidentCtas + 1) * sizeof(unsigned);
    void* host = nullptr;
    void* device = nullptr;
    if (Status st =
            cuda_check(cudaHostAlloc(&host, bytes, cudaHostAllocMapped), "cudaHostAlloc(mapped flags)");
        !st)
      return st;
    host_ = static_cast<unsigned*>(host);
    std::memset(host, 0, bytes);
    if (Status st = cuda_check(cudaHostGetDevicePointer(&device, host, 0), "cudaHostGetDevicePointer"); !st)
      return st;
    device_ = static_cast<unsigned*>(device);
    return Status::success();
  }
  [[nodiscard]] volatile unsigned& started(int cta) const noexcept {
    return static_cast<volatile unsigned*>(host_)[cta];
  }
  [[nodiscard]] volatile unsigned& stop() const noexcept {
    return static_cast<volatile unsigned*>(host_)[kMaxResidentCtas];
  }
  [[nodiscard]] unsigned* device_started() const noexcept { return device_; }
  [[nodiscard]] const unsigned* device_stop() const noexcept { return device_ + kMaxResidentCtas; }

 private:
  unsigned* host_ = nullptr;
  unsigned* device_ = nullptr;
};

struct Run {
  int failures = 0;
  StreamHandle a, b;
  EventPool marks, bounds;
  MappedFlags flags;
  DeviceBuffer copied;  // the resident copy kernel's count of 16-byte vectors
  std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();

  void error(const std::string& what, const Status& st) {
    std::printf("interference %s error %s\n", what.c_str(), st.message().c_str());
    std::fflush(stdout);
    ++failures;
  }
  // Past kBudget: "interference <what> skipped" and true (the step's cap is 60 s; the figures so far stand).
  bool out_of_time(const std::string& what) const {
    if (std::chrono::steady_clock::now() - began <= kBudget) return false;
    std::printf("interference %s skipped -- the subcommand's time budget (%lld s) is spent\n", what.c_str(),
                static_cast<long long>(kBudget.count()));
    std::fflush(stdout);
    return true;
  }
};

// The baseline of one slowdown: the compute alone just before and just after the measurement beside comm.
struct Baseline {
  double before_ms = 0, after_ms = 0;
  [[nodiscard]] double ms() const noexcept { return 0.5 * (before_ms + after_ms); }
  [[nodiscard]] double slowdown(double with_ms) const noexcept { return with_ms / ms() - 1.0; }
};

// `measure` between two compute_alone figures of `compute` (clock and thermal drift cancel in their mean).
Status bracketed(const Compute& compute, const Run& run, const std::function<Status()>& measure,
                 Baseline& baseline) {
  if (Status st = compute_alone(compute, run.a.get(), run.marks, baseline.before_ms); !st) return st;
  if (Status st = measure(); !st) return st;
  return compute_alone(compute, run.a.get(), run.marks, baseline.after_ms);
}

std::string format_fields(const char* key, double gbps_value, double busy) {
  char text[96];
  std::snprintf(text, sizeof text, "%s=%.1f comm_busy=%.3f", key, gbps_value, busy);
  return text;
}

// "interference <compute> <with> ms= tflops= slowdown= <comm fields> alone_before_ms= alone_after_ms= --".
void print_with(const char* compute, const std::string& with, double ms, double flops, const Baseline& base,
                const std::string& comm_fields, const std::string& explanation) {
  std::printf(
      "interference %s %s ms=%.4f tflops=%.1f slowdown=%.4f %s alone_before_ms=%.4f alone_after_ms=%.4f -- "
      "%s; slowdown = ms / mean(alone_before_ms, alone_after_ms) - 1, the %s alone (median of %d windows) "
      "just before and just after\n",
      compute, with.c_str(), ms, tflops(flops, ms), base.slowdown(ms), comm_fields.c_str(), base.before_ms,
      base.after_ms, explanation.c_str(), compute, kWindows);
  std::fflush(stdout);
}

void print_overlap(const char* compute, const std::string& with, const Overlap& o, const Baseline& base,
                   double flops, const char* comm_key) {
  print_with(compute, with, o.compute_ms, flops, base, format_fields(comm_key, o.comm_gbps, o.comm_busy),
             std::string(compute) + " per launch while the comm kernel ran on another stream (median of " +
                 std::to_string(kWindows) + " windows of " + std::to_string(kWindowRuns) +
                 " back-to-back launches); " + comm_key +
                 " counts read + write (2 x copied bytes) inside the window; comm_busy = share of the window "
                 "with a comm operation in flight (lowest window)");
}

// The copy kernel's comm operations over one 512 MiB buffer pair, for each CTA count.
struct CopyBuffers {
  DeviceBuffer src, dst;
};

struct ResidentWindow {
  double compute_ms = 0;  // per compute launch (0 without compute)
  double copy_ms = 0;     // the resident copy kernel's run time
  double copy_gbps = 0;   // 2 × bytes copied / copy_ms
  double comm_busy = 0;   // share of the compute window inside the copy kernel's run
  int sms = 0;            // distinct SMs that the copy CTAs ran on
};

// One comm-first window: the resident copy (`ctas` CTAs) launched on stream B between bounds[0] and
// bounds[1]; once every CTA has said (host-mapped flag) that it runs, kWindowRuns launches of `compute` on
// stream A between marks[0] and marks[1] (without compute: kResidentAloneTime of waiting); then the stop
// flag.
Status resident_window(const Compute* compute, const CopyBuffers& copy, int ctas, const Run& run,
                       ResidentWindow& out) {
  if (ctas < 1 || ctas > kMaxResidentCtas)
    return Status::failure("resident copy: " + std::to_string(ctas) + " CTAs (1.." +
                           std::to_string(kMaxResidentCtas) + ")");
  for (int i = 0; i < ctas; ++i) run.flags.started(i) = 0;
  run.flags.stop() = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const cudaStream_t a = run.a.get(), b = run.b.get();
  auto* copied = static_cast<unsigned long long*>(run.copied.get());
  Status st = cuda_check(cudaMemsetAsync(copied, 0, sizeof(unsigned long long), b), "cudaMemsetAsync");
  if (st) st = cuda_check(cudaEventRecord(run.bounds[0], b), "cudaEventRecord");
  if (st)
    st = cuda_check(launch_comm_copy_resident(copy.src.get(), copy.dst.get(), kCopyBytes, ctas,
                                              run.flags.device_started(), run.flags.device_stop(), copied,
                                              kResidentMaxNs, b),
                    "resident copy kernel launch");
  if (st) st = cuda_check(cudaEventRecord(run.bounds[1], b), "cudaEventRecord");
  // Comm first: every copy CTA resident on its SM before the compute is launched (bounded wait).
  const auto deadline = std::chrono::steady_clock::now() + kResidentStartTimeout;
  for (int running = 0; st;) {
    running = 0;
    for (int i = 0; i < ctas; ++i) running += run.flags.started(i) != 0 ? 1 : 0;
    if (running == ctas) break;
    if (std::chrono::steady_clock::now() > deadline)
      st = Status::failure("only " + std::to_string(running) + " of " + std::to_string(ctas) +
                           " resident copy CTAs had started after 1 s");
    std::this_thread::yield();
  }
  if (st && compute != nullptr) {
    st = cuda_check(cudaEventRecord(run.marks[0], a), "cudaEventRecord");
    for (int i = 0; st && i < kWindowRuns; ++i) st = compute->launch(a);
    if (st) st = cuda_check(cudaEventRecord(run.marks[1], a), "cudaEventRecord");
    if (st) st = cuda_check(cudaEventSynchronize(run.marks[1]), compute->name + " window");
  } else if (st) {
    std::this_thread::sleep_for(kResidentAloneTime);
  }
  run.flags.stop() = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const Status drained = cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the resident copy");
  if (!st) return st;
  if (!drained) return drained;
  std::set<unsigned> sms;
  for (int i = 0; i < ctas; ++i) sms.insert(static_cast<unsigned>(run.flags.started(i)));
  out.sms = static_cast<int>(sms.size());
  unsigned long long vectors = 0;
  if (Status s = cuda_check(cudaMemcpy(&vectors, copied, sizeof vectors, cudaMemcpyDeviceToHost),
                            "cudaMemcpy(copied)");
      !s)
    return s;
  if (Status s = elapsed(run.bounds[0], run.bounds[1], out.copy_ms); !s) return s;
  if (out.copy_ms >= 0.99 * static_cast<double>(kResidentMaxNs) * 1e-6)
    return Status::failure("the resident copy ran into its own time limit: the stop flag never reached it");
  out.copy_gbps = gbps(static_cast<std::size_t>(vectors) * 16, out.copy_ms);
  if (compute == nullptr) return Status::success();
  double a0 = 0, a1 = 0;
  if (Status s = elapsed(run.bounds[0], run.marks[0], a0); !s) return s;
  if (Status s = elapsed(run.bounds[0], run.marks[1], a1); !s) return s;
  const double window = a1 - a0;
  out.compute_ms = window / kWindowRuns;
  out.comm_busy = window > 0 ? std::max(0.0, std::min(out.copy_ms, a1) - std::max(0.0, a0)) / window : 0;
  return Status::success();
}

// kWindows comm-first windows (after one warm-up window): the medians, the lowest comm_busy, the fewest SMs.
Status resident(const Compute& compute, const CopyBuffers& copy, int ctas, const Run& run,
                ResidentWindow& out) {
  std::vector<double> compute_ms, gbps_values;
  out.comm_busy = 1;
  out.sms = ctas;
  for (int w = 0; w <= kWindows; ++w) {
    ResidentWindow window;
    if (Status st = resident_window(&compute, copy, ctas, run, window); !st) return st;
    if (w == 0) continue;
    compute_ms.push_back(window.compute_ms);
    gbps_values.push_back(window.copy_gbps);
    out.comm_busy = std::min(out.comm_busy, window.comm_busy);
    out.sms = std::min(out.sms, window.sms);
  }
  out.compute_ms = median(compute_ms);
  out.copy_gbps = median(gbps_values);
  return Status::success();
}

// "<compute> with=copy-resident ctas=C" for each CTA count: the compute launched once the copy is resident.
// The slowdown with 16 CTAs, if measured, goes to `slowdown16`.
void run_resident(Run& run, const Compute& compute, const CopyBuffers& copy,
                  std::initializer_list<int> counts, std::optional<double>* slowdown16) {
  for (int ctas : counts) {
    const std::string with = "with=copy-resident ctas=" + std::to_string(ctas);
    if (run.out_of_time(compute.name + " " + with)) return;
    ResidentWindow r;
    Baseline base;
    if (Status st = bracketed(
            compute, run, [&] { return resident(compute, copy, ctas, run, r); }, base);
        !st) {
      run.error(compute.name + " " + with, st);
      continue;
    }
    print_with(
        compute.name.c_str(), with, r.compute_ms, compute.flops, base,
        format_fields("copy_GBps", r.copy_gbps, r.comm_busy) + " sms=" + std::to_string(r.sms),
        compute.name +
            " per launch, launched only once every CTA of the resident copy kernel (cycling over " +
            std::to_string(kCopyBytes >> 20) +
            " MiB until told to stop) ran on its SM: comm first, as a running NCCL kernel (median of " +
            std::to_string(kWindows) + " windows of " + std::to_string(kWindowRuns) +
            " launches); copy_GBps = 2 x bytes copied / the copy kernel's run time; comm_busy = share of "
            "the window inside that run (lowest window); sms = distinct SMs of the copy CTAs");
    if (ctas == 16 && slowdown16 != nullptr) *slowdown16 = base.slowdown(r.compute_ms);
  }
}

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
void run_nccl(Run& run, const Compute& gemm, std::optional<double>& slowdown) {
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
  Baseline base;
  if (Status st = bracketed(
          gemm, run,
          [&] {
            return overlap(gemm, sendrecv, alone_ms, run.a.get(), run.b.get(), run.bounds, run.marks, o);
          },
          base);
      !st) {
    run.error("gemm with=nccl-sendrecv", st);
  } else {
    print_overlap("gemm", "with=nccl-sendrecv bytes=" + std::to_string(kNcclBytes), o, base, gemm.flops,
                  "comm_GBps");
    slowdown = base.slowdown(o.compute_ms);
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

#ifdef ZB_GPUCHECK_HAVE_CUDNN
// The cuDNN SDPA forward and its buffers, alive from its alone figure to the comm-first figures at the end.
struct SdpaCase {
  cuda::SdpaPlan plan;
  DeviceBuffer q, k, v, o, lse, workspace;
  cuda::SdpaForwardTensors tensors{};
  Compute forward;
};
#endif

}  // namespace

int run_interference() {
  Run run;
  for (Status st :
       {run.a.create("A"), run.b.create("B"), run.marks.create(2), run.bounds.create(2 * kMaxCommOps),
        run.flags.create(), run.copied.allocate(sizeof(unsigned long long), "resident copy count")}) {
    if (!st) {
      run.error("setup", st);
      return 1;
    }
  }

  // 1. GEMM alone (after kComputeWarmupRuns launches, so that the clocks have settled).
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
  Status warmed = Status::success();
  for (int i = 0; warmed && i < kComputeWarmupRuns; ++i) warmed = gemm.launch(run.a.get());
  if (warmed) warmed = cuda_check(cudaStreamSynchronize(run.a.get()), "gemm warm-up");
  if (Status st = warmed ? compute_alone(gemm, run.a.get(), run.marks, gemm_ms) : warmed; !st) {
    run.error("gemm alone", st);
    return 1;
  }
  std::printf(
      "interference gemm alone m=%lld n=%lld k=%lld ms=%.4f tflops=%.1f -- cuBLASLt bf16 GEMM per launch, "
      "nothing else on the GPU (median of %d windows of %d back-to-back launches on one stream, after %d "
      "warm-up launches)\n",
      static_cast<long long>(kGemmSize), static_cast<long long>(kGemmSize), static_cast<long long>(kGemmSize),
      gemm_ms, tflops(gemm.flops, gemm_ms), kWindows, kWindowRuns, kComputeWarmupRuns);
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
  std::optional<double> copy16_slowdown, nccl_slowdown, resident16_slowdown;
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
    Baseline base;
    if (Status st = bracketed(
            gemm, run,
            [&] { return overlap(gemm, c, ms, run.a.get(), run.b.get(), run.bounds, run.marks, o); }, base);
        !st) {
      run.error("gemm with=copy ctas=" + std::to_string(ctas), st);
      continue;
    }
    print_overlap("gemm", "with=copy ctas=" + std::to_string(ctas), o, base, gemm.flops, "copy_GBps");
    if (ctas == 16) copy16_slowdown = base.slowdown(o.compute_ms);
  }

  // 4. cuDNN SDPA beside the copy kernel.
#ifdef ZB_GPUCHECK_HAVE_CUDNN
  std::unique_ptr<SdpaCase> sdpa;
  [&] {
    if (run.out_of_time("sdpa")) return;
    auto c = std::make_unique<SdpaCase>();
    const AttentionShape shape{kSdpaHeads, kSdpaHeads, kSdpaHeadDim, kSdpaLength, kSdpaLength, kSdpaLength};
    const std::vector<AttentionBlockDesc> blocks{
        {0, kSdpaLength, 0, kSdpaLength, 0, 0, AttentionMask::causal, 0}};
    const auto elements = static_cast<std::size_t>(kSdpaLength) * kSdpaHeads * kSdpaHeadDim;
    if (Status st = c->plan.build(shape, blocks, cuda::ElementType::bf16, false); !st)
      return run.error("sdpa alone", st);
    for (Status st :
         {c->q.allocate(elements * 2, "q"), c->k.allocate(elements * 2, "k"),
          c->v.allocate(elements * 2, "v"), c->o.allocate(elements * 2, "o"),
          c->lse.allocate(static_cast<std::size_t>(kSdpaLength) * kSdpaHeads * 4, "lse"),
          c->workspace.allocate(c->plan.workspace_bytes(), "workspace"), fill_uniform_bf16(c->q, 42, "q"),
          fill_uniform_bf16(c->k, 43, "k"), fill_uniform_bf16(c->v, 44, "v")}) {
      if (!st) return run.error("sdpa alone", st);
    }
    c->tensors = cuda::SdpaForwardTensors{
        c->q.get(),        c->k.get(), c->v.get(), c->o.get(), static_cast<float*>(c->lse.get()),
        c->workspace.get()};
    SdpaCase* self = c.get();
    c->forward = Compute{"sdpa",
                         4.0 * static_cast<double>(kSdpaLength) * static_cast<double>(kSdpaLength) *
                             kSdpaHeads * kSdpaHeadDim / 2.0,
                         [self](cudaStream_t s) { return cuda::sdpa_forward(self->plan, self->tensors, s); }};
    const Compute& forward = c->forward;
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
    sdpa = std::move(c);
    for (const auto& [ctas, copy_ms] : copy_alone) {
      if (ctas == 8) continue;
      const std::string with = "with=copy ctas=" + std::to_string(ctas);
      if (run.out_of_time("sdpa " + with)) break;
      Overlap ov;
      Baseline base;
      if (Status st = bracketed(
              forward, run,
              [&] {
                return overlap(forward, copy_comm(ctas), copy_ms, run.a.get(), run.b.get(), run.bounds,
                               run.marks, ov);
              },
              base);
          !st) {
        run.error("sdpa " + with, st);
        continue;
      }
      print_overlap("sdpa", with, ov, base, forward.flops, "copy_GBps");
    }
  }();
#else
  std::printf("interference sdpa skipped -- built without cudnn-frontend: no cuDNN SDPA to overlap\n");
#endif

  // 5. A real NCCL kernel, and the small messages' cost.
#ifdef ZB_HAVE_NCCL
  if (!run.out_of_time("nccl")) run_nccl(run, gemm, nccl_slowdown);
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

  // 6. Comm first: the copy kernel resident on its SMs before the compute kernel is launched.
  for (int ctas : {8, 16, 32}) {
    if (run.out_of_time("copy-resident alone ctas=" + std::to_string(ctas))) break;
    ResidentWindow alone;
    if (Status st = resident_window(nullptr, copy, ctas, run, alone); !st) {
      run.error("copy-resident alone ctas=" + std::to_string(ctas), st);
      continue;
    }
    std::printf(
        "interference copy-resident alone ctas=%d ms=%.4f GBps=%.1f sms=%d -- the resident copy kernel "
        "(cycling over %zu bytes until told to stop) alone for about %lld ms; GB/s counts read + write\n",
        ctas, alone.copy_ms, alone.copy_gbps, alone.sms, kCopyBytes,
        static_cast<long long>(kResidentAloneTime.count()));
    std::fflush(stdout);
  }
  run_resident(run, gemm, copy, {8, 16, 32}, &resident16_slowdown);
#ifdef ZB_GPUCHECK_HAVE_CUDNN
  if (sdpa) run_resident(run, sdpa->forward, copy, {16, 32}, nullptr);
#endif
  if (resident16_slowdown) {
    std::printf(
        "interference summary-resident comm_compute_slowdown=%.4f source=copy-resident-ctas16 -- GEMM time "
        "launched beside an already-resident 16-CTA copy kernel / alone - 1 (comm first)\n",
        *resident16_slowdown);
  } else if (!run.out_of_time("summary-resident")) {
    std::printf("interference summary-resident error no comm-first GEMM slowdown was measured\n");
    ++run.failures;
  }
  std::printf("interference time s=%.1f -- the subcommand's wall time\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - run.began).count());
  std::fflush(stdout);
  return run.failures == 0 ? 0 : 1;
}

}  // namespace zb::kernels::gpucheck
