// The SimGrid side: builds the platform with the s4u NetZone API and drives the task graph from maestro
// (no actors): flows are started directly and Activity::on_completion releases their successors.
// One actor per op would cost a context switch per op, and actors would not shorten the list below:
// SimGrid 3.32 keeps every detached Comm (sendto Comms always are) in maestro's list whichever actor
// started it.
//
// Compute ops are kernel timers, not Execs. A GPU's compute stream runs one op at a time at a fixed
// speed and shares nothing with anything else, so an Exec would only ever finish at start + duration;
// as a timer it ends at exactly that date without a CPU-model action, a max-min variable or, above all,
// an entry in maestro's activity list. SimGrid keeps the activities started from maestro in one
// std::list and removes each on completion with list::remove, a scan of the whole list: with ~1000
// GPUs that list holds thousands of entries and the scan was ~45 % of the run. Timers keep the list to
// the flows in flight.
//
// Interference (docs/SIMULATOR.md): a compute timer is set for the work left at the GPU's current rate,
// which is 1/(1 + s) while any flow to or from that GPU is in flight (its NCCL kernels take SMs and HBM
// bandwidth; a proxy relaying a chunk pays the same way) and 1 otherwise. When a GPU's communication
// starts or stops, its running kernel's work left is updated and a new timer set; the old one fires
// later and is ignored (its generation no longer matches). Per-message overhead: a flow occupies its
// sender for Platform::issue_overhead before its bytes move, one message after another per sender and
// link class.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#include "core/exec/sim/simulate.hpp"

namespace zb::sim {

namespace sg = simgrid::s4u;

namespace {

// Hosts only anchor routes (compute runs on timers); any speed will do.
constexpr double kHostSpeed = 1e9;

namespace timer = simgrid::kernel::timer;
namespace routing = simgrid::kernel::routing;

// The root netzone: one host per GPU whose routes are read from Platform::solver_route when SimGrid asks
// for them (once per flow), in the order and with the latencies a full zone holding the same routes would
// give. A full zone keeps an N × N table of route pointers (2 GiB at 16384 GPUs, whatever few routes are
// declared) and had to be filled with every pair the plan uses; this one holds nothing per pair.
class PlatformZone final : public routing::NetZoneImpl {
 public:
  PlatformZone(const std::string& name, const Platform& platform) : NetZoneImpl(name), platform_(platform) {}
  PlatformZone(const PlatformZone&) = delete;
  PlatformZone& operator=(const PlatformZone&) = delete;
  ~PlatformZone() override = default;

  // The SimGrid links, by Platform link index; set before the first route is asked for.
  void set_links(std::vector<simgrid::kernel::resource::StandardLinkImpl*> links) {
    links_ = std::move(links);
  }

  void get_local_route(const routing::NetPoint* src, const routing::NetPoint* dst, routing::Route* into,
                       double* latency) override {
    // Hosts are this zone's only components, created in rank order: a host's netpoint id is its rank.
    for (int l : platform_.solver_route(static_cast<int>(src->id()), static_cast<int>(dst->id()))) {
      into->link_list_.push_back(links_[static_cast<std::size_t>(l)]);
      // What SimGrid's route lookup adds per link (the link's latency as set below), in route order.
      if (latency != nullptr) *latency += platform_.links()[static_cast<std::size_t>(l)].latency;
    }
  }

 private:
  const Platform& platform_;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links_;
};

class Driver {
 public:
  Driver(const Platform& platform, const TaskGraph& graph, TaskTimes& times)
      : platform_(platform), graph_(graph), times_(times) {}

  void run() {
    build_platform();
    const auto& tasks = graph_.tasks();
    pending_.resize(tasks.size());
    for (std::size_t t = 0; t < tasks.size(); ++t) pending_[t] = tasks[t].predecessors;
    times_.start.assign(tasks.size(), -1.0);
    times_.end.assign(tasks.size(), -1.0);
    comms_.resize(tasks.size());
    const auto ranks = static_cast<std::size_t>(graph_.world_size());
    running_.assign(ranks, Running{});
    comm_active_.assign(ranks, 0);
    issue_free_.assign(2 * ranks, 0.0);
    slowdown_ = platform_.compute_slowdown_under_comm();

    sg::Activity::on_completion_cb([this](const sg::Activity& activity) { on_completion(activity); });
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      if (pending_[t] == 0) become_ready(static_cast<int>(t));
    }
    settle();
    engine_->run();
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      if (times_.end[t] < 0) {
        throw std::runtime_error(
            "the simulation stopped with task " + std::to_string(t) +
            " never run: the program's dependencies cannot all be met (lower::verify names the cycle)");
      }
    }
  }

  void set_engine(sg::Engine* engine) { engine_ = engine; }

 private:
  void build_platform() {
    // The first netzone created becomes SimGrid's root, which owns and deletes it.
    auto* zone = new PlatformZone("cluster", platform_);
    sg::NetZone* iface = zone->get_iface();
    for (int r = 0; r < graph_.world_size(); ++r) {
      hosts_.push_back(iface->create_host(platform_.host_name(r), kHostSpeed)->seal());
      if (hosts_.back()->get_netpoint()->id() != static_cast<unsigned long>(r))
        throw std::runtime_error("SimGrid numbered the host of rank " + std::to_string(r) + " differently");
    }
    std::vector<simgrid::kernel::resource::StandardLinkImpl*> impls;
    for (const auto& l : platform_.links()) {
      links_.push_back(iface->create_link(l.name, l.bandwidth)->set_latency(l.latency)->seal());
      impls.push_back(links_.back()->get_impl());
    }
    zone->set_links(std::move(impls));
    iface->seal();
  }

  void become_ready(int task) {
    const Task& t = graph_.tasks()[static_cast<std::size_t>(task)];
    const double now = sg::Engine::get_clock();
    times_.start[static_cast<std::size_t>(task)] = now;
    switch (t.kind) {
      case TaskKind::join:
        finished_now_.push_back(task);
        break;
      case TaskKind::compute:
        // The task graph chains a rank's compute instructions in list order, so a ready compute task
        // always has its stream to itself: it ends `amount` later at full rate, later under interference.
        if (t.amount <= 0) {
          finished_now_.push_back(task);
        } else {
          Running& run = running_[static_cast<std::size_t>(t.rank)];
          run.task = task;
          run.work_left = t.amount;
          run.since = now;
          run.rate = rate_of(t.rank);
          set_compute_timer(t.rank);
        }
        break;
      case TaskKind::flow: {
        // The sender issues its messages one after another, each taking its overhead (LogGP's o): one
        // queue per sender and link class (NVLink P2P and the network proxy are separate engines).
        const bool inter_node = platform_.inter_node(t.rank, t.dst);
        double& free_at = issue_free_[2 * static_cast<std::size_t>(t.rank) + (inter_node ? 1 : 0)];
        free_at = std::max(now, free_at) + platform_.issue_overhead(t.rank, t.dst);
        if (free_at > now) {
          timer::Timer::set(free_at, [this, task] { start_flow(task); });
        } else {
          start_flow(task);
        }
        break;
      }
    }
  }

  void start_flow(int task) {
    const Task& t = graph_.tasks()[static_cast<std::size_t>(task)];
    times_.start[static_cast<std::size_t>(task)] = sg::Engine::get_clock();  // its first byte leaves
    sg::CommPtr comm = sg::Comm::sendto_init(hosts_[static_cast<std::size_t>(t.rank)],
                                             hosts_[static_cast<std::size_t>(t.dst)]);
    comm->set_payload_size(static_cast<std::uint64_t>(t.amount + 0.5));
    // The task id rides on the Comm, so its completion finds the task without a lookup table.
    comm->set_data(reinterpret_cast<void*>(static_cast<std::intptr_t>(task)));
    comm->start();
    comms_[static_cast<std::size_t>(task)] = std::move(comm);  // alive until it completes
    comm_changed(t.rank, +1);
    comm_changed(t.dst, +1);
  }

  // ------------------------------------------------------------------------------------ interference
  // A GPU's compute rate: slowed while any of its flows is in flight.
  [[nodiscard]] double rate_of(int rank) const {
    return comm_active_[static_cast<std::size_t>(rank)] > 0 ? 1.0 / (1.0 + slowdown_) : 1.0;
  }

  void comm_changed(int rank, int delta) {
    int& active = comm_active_[static_cast<std::size_t>(rank)];
    const bool was_busy = active > 0;
    active += delta;
    if (slowdown_ <= 0 || was_busy == (active > 0)) return;
    Running& run = running_[static_cast<std::size_t>(rank)];
    if (run.task < 0) return;
    const double now = sg::Engine::get_clock();
    run.work_left = std::max(0.0, run.work_left - (now - run.since) * run.rate);
    run.since = now;
    run.rate = rate_of(rank);
    set_compute_timer(rank);
  }

  void set_compute_timer(int rank) {
    Running& run = running_[static_cast<std::size_t>(rank)];
    const std::uint64_t generation = ++run.generation;
    timer::Timer::set(run.since + run.work_left / run.rate, [this, rank, generation] {
      Running& current = running_[static_cast<std::size_t>(rank)];
      if (current.generation != generation || current.task < 0) return;  // superseded by a new rate
      const int task = current.task;
      current.task = -1;
      on_compute_done(task);
    });
  }

  // Releases the successors of everything finished at this date.
  void settle() {
    while (!finished_now_.empty()) {
      const int task = finished_now_.back();
      finished_now_.pop_back();
      times_.end[static_cast<std::size_t>(task)] = sg::Engine::get_clock();
      for (int s : graph_.successors()[static_cast<std::size_t>(task)]) {
        if (--pending_[static_cast<std::size_t>(s)] == 0) become_ready(s);
      }
    }
  }

  void on_compute_done(int task) {
    finished_now_.push_back(task);
    settle();
  }

  void on_completion(const sg::Activity& activity) {
    graveyard_.clear();  // comms completed earlier: their callbacks have returned, release them
    const auto task = static_cast<std::size_t>(reinterpret_cast<std::intptr_t>(activity.get_data<void>()));
    if (task >= comms_.size() || comms_[task].get() != &activity) return;
    // Keep the reference alive until the next callback; dropping it inside its own callback would free
    // the activity SimGrid is still completing.
    graveyard_.push_back(std::move(comms_[task]));
    const Task& t = graph_.tasks()[task];
    comm_changed(t.rank, -1);
    comm_changed(t.dst, -1);
    finished_now_.push_back(static_cast<int>(task));
    settle();
  }

  // The compute kernel a GPU runs now: its work left (seconds at full rate) as of `since`, at `rate`.
  struct Running {
    int task = -1;
    double work_left = 0;
    double since = 0;
    double rate = 1;
    std::uint64_t generation = 0;
  };

  const Platform& platform_;
  const TaskGraph& graph_;
  TaskTimes& times_;
  sg::Engine* engine_ = nullptr;
  std::vector<sg::Host*> hosts_;
  std::vector<sg::Link*> links_;
  std::vector<int> pending_;
  std::vector<int> finished_now_;
  std::vector<sg::CommPtr> comms_;  // by task id: the flows in flight
  std::vector<sg::CommPtr> graveyard_;
  std::vector<Running> running_;    // by rank
  std::vector<int> comm_active_;    // by rank: flows in flight to or from it
  std::vector<double> issue_free_;  // by rank and link class: when it may issue its next message
  double slowdown_ = 0;
};

}  // namespace

TaskTimes simulate_in_this_process(const Platform& platform, const TaskGraph& graph) {
  // Silence SimGrid before it parses anything; CM02 is the plain max-min flow model (no TCP slow-start
  // factors), TCP-gamma 0 removes the window bound and crosstraffic 0 the 5 % reverse-path load, so a
  // lone flow takes exactly latency + bytes / bandwidth and flows on one link share it equally.
  xbt_log_control_set("root.thresh:critical");
  std::vector<std::string> args = {"zeppelin-bench-sim", "--log=root.thresh:critical",
                                   "--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0",
                                   "--cfg=network/crosstraffic:0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg::Engine engine(&argc, argv.data());
  TaskTimes times;
  Driver driver(platform, graph, times);
  driver.set_engine(&engine);
  driver.run();
  return times;
}

std::string simgrid_version() {
  return "SimGrid " + std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) +
         "." + std::to_string(SIMGRID_VERSION_PATCH);
}

}  // namespace zb::sim
