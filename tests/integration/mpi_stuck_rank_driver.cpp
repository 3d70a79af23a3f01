// zb_mpi_stuck_rank_driver: one rank of a 4-process reference run stops, as a hung or SIGSTOPped
// process would, and never touches MPI again; or, in `slow-result`, is only slow. FAULT says when:
//   layer          after its first transfer send, in the middle of its layer;
//   result         when it is about to send its verification result, after its instructions: the others
//                  wait for that record (they once waited 2 hours there, issue 38);
//   statistics     (forward and backward) when it is about to send its row statistics, the record the
//                  others' gradient check waits for;
//   slow-result    not stopped: it takes three receive timeouts, polling, before it sends its result,
//                  as a rank still verifying does; the others must wait for it and finish.
// In the stop cases the other ranks must time out, name the rank that stopped and end the whole job with
// MPI_Abort, instead of reporting a broken plan and then waiting for it in MPI_Finalize or for hours.
//
//   mpirun -np 4 zb_mpi_stuck_rank_driver STUCK_RANK [FAULT]   (mpi_stuck_rank.cmake checks the outcome)
//
// It calls run_mpi_rank directly, rather than through ReferenceExecutor, because the fault sits in
// the transport: the stuck rank's transport is wrapped so it can stop while the others run on.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

#include "core/exec/reference/gradient_reference.hpp"
#include "core/exec/reference/mpi_run.hpp"
#include "tests/integration/reference_support.hpp"

namespace {

using namespace zb;
using namespace zb::reference;

enum class Fault { layer, result, statistics, slow_result };

// Forwards to the real transport until the fault's moment, then stops for good (or, slow_result, delays).
class FaultyTransport final : public Transport {
 public:
  FaultyTransport(Transport& real, Fault fault, std::chrono::milliseconds timeout)
      : real_(real), fault_(fault), timeout_(timeout) {}
  [[nodiscard]] int rank() const override { return real_.rank(); }
  [[nodiscard]] int size() const override { return real_.size(); }
  [[nodiscard]] std::string name() const override { return real_.name(); }
  void send(int dst, Tag tag, Bytes payload) override {
    const bool result = tag.kind() == MessageKind::result && tag.id() == 0;  // 1: fingerprint
    const bool statistics = tag.kind() == MessageKind::result && tag.id() == 2;
    if (fault_ == Fault::slow_result && result && !delayed_) {
      delayed_ = true;
      std::fprintf(stderr, "rank %d: takes %lld ms more before its result (the injected delay)\n", rank(),
                   static_cast<long long>(3 * timeout_.count()));
      const auto until = std::chrono::steady_clock::now() + 3 * timeout_;
      while (std::chrono::steady_clock::now() < until)
        (void)real_.wait_for_message(std::chrono::milliseconds(10));
    }
    if ((fault_ == Fault::result && result) || (fault_ == Fault::statistics && statistics))
      stop("before sending " + describe(tag));
    real_.send(dst, tag, std::move(payload));
    if (fault_ == Fault::layer && tag.kind() == MessageKind::transfer) stop("after its first transfer send");
  }
  [[nodiscard]] std::optional<Bytes> try_recv(int src, Tag tag) override { return real_.try_recv(src, tag); }
  [[nodiscard]] std::optional<Envelope> try_recv_kind(MessageKind kind) override {
    return real_.try_recv_kind(kind);
  }
  bool wait_for_message(std::chrono::milliseconds timeout) override {
    return real_.wait_for_message(timeout);
  }
  Bytes recv_record(int src, Tag tag, std::chrono::milliseconds check_every) override {
    return real_.recv_record(src, tag, check_every);
  }

 private:
  [[noreturn]] void stop(const std::string& when) {
    std::fprintf(stderr, "rank %d: stops now, %s (the injected fault)\n", rank(), when.c_str());
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // never polls MPI again
  }

  Transport& real_;
  Fault fault_;
  std::chrono::milliseconds timeout_;
  bool delayed_ = false;
};

int run(int stuck, Fault fault) {
  Scenario scenario = test::small_cluster(2, 2, false, 11);
  const bool backward = fault == Fault::statistics;
  const CostModel cost(scenario.cluster, scenario.model);
  // The first system whose stuck rank sends at least two transfer legs: it stops after the first, so the
  // receiver of the second is left waiting for it (a rank whose only send is its first would stop with
  // nothing owed, and the others would just finish).
  plan::Plan plan;
  lower::Program program;
  for (const SystemSpec& system : test::reference_systems(scenario.cluster)) {
    plan = make_strategy(system, scenario, cost)->make_plan(test::batch_of({100, 517, 1000}));
    program = lower::lower(plan, cost, {.backward = backward});
    const auto& instrs = program.ranks.at(static_cast<std::size_t>(stuck)).instrs;
    if (std::count_if(instrs.begin(), instrs.end(),
                      [](const lower::Instr& in) { return in.kind == lower::InstrKind::send; }) >= 2)
      break;
  }
  ReferenceOptions options;
  options.receive_timeout = std::chrono::milliseconds(1000);  // the test waits seconds, not the default 10 s
  RunInputs inputs{
      program,      options, QkvGenerator(scenario.seed, {options.heads, options.kv_heads, options.head_dim}),
      Clock::now(), nullptr, false};
  std::optional<GradientReference> gradients;  // one per process under MPI, as ReferenceExecutor has it
  if (backward) inputs.gradients = &gradients.emplace(program, inputs.generator);
  const std::unique_ptr<Transport> mpi = make_mpi_transport();
  if (mpi->size() != scenario.cluster.world_size()) {
    std::fprintf(stderr, "run with mpirun -np %d\n", scenario.cluster.world_size());
    return 2;
  }
  FaultyTransport faulty(*mpi, fault, options.receive_timeout);
  Transport& transport = mpi->rank() == stuck ? static_cast<Transport&>(faulty) : *mpi;
  (void)run_mpi_rank(transport, inputs);
  std::printf("rank %d: finished its layer\n", mpi->rank());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string fault = argc == 3 ? argv[2] : "layer";
  const Fault faults[] = {Fault::layer, Fault::result, Fault::statistics, Fault::slow_result};
  const char* names[] = {"layer", "result", "statistics", "slow-result"};
  const auto known = std::find(std::begin(names), std::end(names), fault);
  if ((argc != 2 && argc != 3) || known == std::end(names)) {
    std::fprintf(stderr,
                 "usage: zb_mpi_stuck_rank_driver STUCK_RANK [layer|result|statistics|slow-result]\n");
    return 2;
  }
  try {
    return run(std::atoi(argv[1]), faults[known - std::begin(names)]);
  } catch (const zb::Error& e) {
    for (const auto& p : e.problems()) std::fprintf(stderr, "error: %s\n", p.str().c_str());
    return static_cast<int>(e.code());
  }
}
