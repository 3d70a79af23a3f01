// The SimGrid side: builds the platform with the s4u NetZone API and drives the task graph from maestro's
// callbacks (timers and the network model's completion signal), with one actor per GPU that only issues
// the flows its GPU sends.
//
// Why flows are issued by actors, as mailbox puts. SimGrid 3.32 keeps every detached Comm (a `sendto`
// Comm always is, whichever actor starts it) and every activity started from maestro in maestro's
// std::list of activities, and removes each on completion with list::remove, a scan of the whole list:
// O(flows in flight) per flow, 47 % of a 4096-GPU run. A put by an actor is kept in that actor's list
// instead, and only appended there (nobody waits for it, which is what would scan it); the receiving
// GPU's actor is its mailbox's permanent receiver, so the put starts at once, as the sendto did. The
// actor is woken by a semaphore when its GPU's first flow of a date is due and issues them all in that
// same date, before time advances.
//
// Compute ops are kernel timers, not Execs. A GPU's compute stream runs one op at a time at a fixed
// speed and shares nothing with anything else, so an Exec would only ever finish at start + duration;
// as a timer it ends at exactly that date without a CPU-model action, a max-min variable or an entry in
// maestro's activity list.
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
#include <deque>
#include <stdexcept>
#include <unordered_map>
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
    start_actors();

    sg::Link::on_communication_state_change_cb(
        [this](simgrid::kernel::resource::NetworkAction& action, simgrid::kernel::resource::Action::State) {
          on_flow_state_change(action);
        });
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      if (pending_[t] == 0) become_ready(static_cast<int>(t));
    }
    settle();
    if (ended_ == tasks.size()) stop_actors();  // nothing left to simulate (an empty program)
    engine_->run();
    if (!in_flight_.empty()) {
      // Started flows whose end never came: the completion signal was not read (on_flow_state_change),
      // which the program cannot cause.
      throw std::runtime_error("the simulation ended with " + std::to_string(in_flight_.size()) +
                               " flows started but never reported ended by " + simgrid_version() +
                               " (the driver reads their ends from the network model's signal, "
                               "core/exec/sim/simgrid_driver.cpp, written for SimGrid 3.32)");
    }
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

  void start_actors() {
    const auto ranks = static_cast<std::size_t>(graph_.world_size());
    outboxes_.resize(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      outboxes_[r].wake = sg::Semaphore::create(0);
      const int rank = static_cast<int>(r);
      sg::ActorPtr actor =
          sg::Actor::create(platform_.host_name(rank), hosts_[r], [this, rank] { gpu_actor(rank); });
      mailboxes_.push_back(sg::Mailbox::by_name(platform_.host_name(rank)));
      mailboxes_.back()->set_receiver(actor);
    }
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

  // The flow's first byte leaves now: its sender's actor issues it at this same date, before time
  // advances (the actor is woken once for all the flows its GPU starts at one date).
  void start_flow(int task) {
    const Task& t = graph_.tasks()[static_cast<std::size_t>(task)];
    times_.start[static_cast<std::size_t>(task)] = sg::Engine::get_clock();
    Outbox& box = outboxes_[static_cast<std::size_t>(t.rank)];
    box.tasks.push_back(task);
    wake(box);
    comm_changed(t.rank, +1);
    comm_changed(t.dst, +1);
  }

  // ------------------------------------------------------------------------------------ GPU actors
  // What a GPU's actor has to issue, and the semaphore that wakes it (released once per batch).
  struct Outbox {
    std::vector<int> tasks;
    bool signaled = false;
    sg::SemaphorePtr wake;
  };

  // One actor per GPU, on its host. It issues the flows its GPU sends as mailbox puts to the receiver's
  // mailbox, whose permanent receiver is the receiving GPU's actor, so a put starts at once without a
  // matching get. Such a put is not detached: SimGrid keeps it in its issuer's list of activities
  // (appended, never scanned: nobody waits for it) instead of maestro's, whose removal on completion
  // scans every flow in flight (the header). The actors only issue; maestro's callbacks decide.
  void gpu_actor(int rank) {
    Outbox& box = outboxes_[static_cast<std::size_t>(rank)];
    while (true) {
      box.wake->acquire();
      box.signaled = false;
      // Issuing is a simcall each; no callback of maestro's runs in between (none can before time
      // advances), but index, not iterators, in case one ever does.
      for (std::size_t i = 0; i < box.tasks.size(); ++i) issue(box.tasks[i]);
      box.tasks.clear();
      if (stopping_) return;
    }
  }

  void issue(int task) {
    const Task& t = graph_.tasks()[static_cast<std::size_t>(task)];
    sg::CommPtr comm = mailboxes_[static_cast<std::size_t>(t.dst)]->put_init(
        &payload_token_, static_cast<std::uint64_t>(t.amount + 0.5));
    comm->start();
    // Its end is reported with the kernel activity (on_flow_state_change), which finds the task here.
    in_flight_.emplace(comm->get_impl(), task);
    comms_[static_cast<std::size_t>(task)] = std::move(comm);  // alive until it completes
  }

  // Every task has ended: the actors return (an actor still blocked when the simulation runs dry would be
  // reported as a deadlock).
  void stop_actors() {
    stopping_ = true;
    for (Outbox& box : outboxes_) wake(box);
  }

  // Wakes a GPU's actor unless it is woken already (it has not run since): once per batch.
  static void wake(Outbox& box) {
    if (box.signaled) return;
    box.signaled = true;
    box.wake->release();
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
      if (++ended_ == graph_.tasks().size()) stop_actors();
    }
  }

  void on_compute_done(int task) {
    finished_now_.push_back(task);
    settle();
  }

  // A flow's network action changed state. s4u reports the completion of an actor's Comm only to the
  // actor that waits for it (none does here, see gpu_actor), so the driver listens to the network
  // model's signal instead. It fires inside the model's update, where nothing may start: the flow is
  // noted and released by a timer at this same date, which runs once the update is over.
  void on_flow_state_change(simgrid::kernel::resource::NetworkAction& network_action) {
    // NetworkAction (not in SimGrid's public headers) derives from Action alone, which it begins with.
    const auto& action = reinterpret_cast<const simgrid::kernel::resource::Action&>(network_action);
    const auto state = action.get_state();
    if (state != simgrid::kernel::resource::Action::State::FINISHED &&
        state != simgrid::kernel::resource::Action::State::FAILED)
      return;
    const auto it = in_flight_.find(action.get_activity());
    if (it == in_flight_.end()) return;
    const bool first_of_date = arrived_.empty();  // else its timer is set already
    arrived_.push_back(it->second);
    in_flight_.erase(it);
    if (!first_of_date) return;
    timer::Timer::set(sg::Engine::get_clock(), [this] { release_arrivals(); });
  }

  void release_arrivals() {
    const double now = sg::Engine::get_clock();
    // Comms that ended at an earlier date have been posted by SimGrid; dropping one still running would
    // make s4u print a warning and a backtrace.
    while (!graveyard_.empty() && graveyard_.front().first < now) graveyard_.pop_front();
    std::vector<int> arrived;
    arrived.swap(arrived_);
    for (const int task : arrived) {
      graveyard_.emplace_back(now, std::move(comms_[static_cast<std::size_t>(task)]));
      const Task& t = graph_.tasks()[static_cast<std::size_t>(task)];
      comm_changed(t.rank, -1);
      comm_changed(t.dst, -1);
      finished_now_.push_back(task);
    }
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
  std::vector<Outbox> outboxes_;         // by rank
  std::vector<sg::Mailbox*> mailboxes_;  // by rank: its actor is the permanent receiver
  bool stopping_ = false;
  std::size_t ended_ = 0;
  int payload_token_ = 0;           // what every put carries (the bytes are simulated, not copied)
  std::vector<sg::CommPtr> comms_;  // by task id: the flows in flight
  std::unordered_map<const simgrid::kernel::activity::ActivityImpl*, int> in_flight_;  // Comm → task
  std::vector<int> arrived_;  // flows that ended at this date, to release (release_arrivals)
  std::deque<std::pair<double, sg::CommPtr>> graveyard_;  // ended flows' Comms, by the date they ended
  std::vector<Running> running_;                          // by rank
  std::vector<int> comm_active_;                          // by rank: flows in flight to or from it
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
                                   "--cfg=network/crosstraffic:0",
                                   // One actor per GPU (the driver's GPU actors): small stacks, as they
                                   // only issue puts, and no guard page, which would double the
                                   // process's memory mappings (16384 GPUs: 32768 of the 65530 allowed).
                                   "--cfg=contexts/stack-size:64", "--cfg=contexts/guard-size:0"};
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
