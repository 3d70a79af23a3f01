// zb_mpi_stuck_rank_driver: one rank of a 4-process reference run stops in the middle of its layer,
// as a hung or SIGSTOPped process would: after its first transfer send it sleeps forever without
// touching MPI again. The other ranks must time out, name the rank that stopped and end the whole job
// with MPI_Abort, instead of reporting a broken plan and then waiting for it in MPI_Finalize forever.
//
//   mpirun -np 4 zb_mpi_stuck_rank_driver STUCK_RANK   (mpi_stuck_rank.cmake checks the outcome)
//
// It calls run_mpi_rank directly, rather than through ReferenceExecutor, because the fault sits in
// the transport: the stuck rank's transport is wrapped so it can stop while the others run on.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/exec/reference/mpi_run.hpp"
#include "tests/integration/reference_support.hpp"

namespace {

using namespace zb;
using namespace zb::reference;

// Forwards to the real transport until its first transfer leg is sent, then stops for good.
class StopsAfterFirstSend final : public Transport {
 public:
  explicit StopsAfterFirstSend(Transport& real) : real_(real) {}
  [[nodiscard]] int rank() const override { return real_.rank(); }
  [[nodiscard]] int size() const override { return real_.size(); }
  [[nodiscard]] std::string name() const override { return real_.name(); }
  void send(int dst, Tag tag, Bytes payload) override {
    real_.send(dst, tag, std::move(payload));
    if (tag.kind() != MessageKind::transfer) return;
    std::fprintf(stderr, "rank %d: stops now, after its first transfer send (the injected fault)\n", rank());
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // never polls MPI again
  }
  [[nodiscard]] std::optional<Bytes> try_recv(int src, Tag tag) override { return real_.try_recv(src, tag); }
  [[nodiscard]] std::optional<Message> try_recv_kind(MessageKind kind) override {
    return real_.try_recv_kind(kind);
  }
  bool wait_for_message(std::chrono::milliseconds timeout) override {
    return real_.wait_for_message(timeout);
  }

 private:
  Transport& real_;
};

int run(int stuck) {
  Scenario scenario = test::small_cluster(2, 2, false, 11);
  const CostModel cost(scenario.cluster, scenario.model);
  // The first system whose stuck rank sends at least two transfer legs: it stops after the first, so the
  // receiver of the second is left waiting for it (a rank whose only send is its first would stop with
  // nothing owed, and the others would just finish).
  plan::Plan plan;
  lower::Program program;
  for (const SystemSpec& system : test::reference_systems(scenario.cluster)) {
    plan = make_strategy(system, scenario, cost)->make_plan(test::batch_of({100, 517, 1000}));
    program = lower::lower(plan, cost, {.backward = false});
    const auto& instrs = program.ranks.at(static_cast<std::size_t>(stuck)).instrs;
    if (std::count_if(instrs.begin(), instrs.end(),
                      [](const lower::Instr& in) { return in.kind == lower::InstrKind::send; }) >= 2)
      break;
  }
  ReferenceOptions options;
  options.receive_timeout = std::chrono::milliseconds(1000);  // the test waits seconds, not the default 10 s
  RunInputs inputs{
      program,      plan,
      options,      QkvGenerator(scenario.seed, {options.heads, options.kv_heads, options.head_dim}),
      Clock::now(), nullptr,
      false};
  const std::unique_ptr<Transport> mpi = make_mpi_transport();
  if (mpi->size() != scenario.cluster.world_size()) {
    std::fprintf(stderr, "run with mpirun -np %d\n", scenario.cluster.world_size());
    return 2;
  }
  StopsAfterFirstSend stopping(*mpi);
  Transport& transport = mpi->rank() == stuck ? static_cast<Transport&>(stopping) : *mpi;
  (void)run_mpi_rank(transport, inputs);
  std::printf("rank %d: finished its layer\n", mpi->rank());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: zb_mpi_stuck_rank_driver STUCK_RANK\n");
    return 2;
  }
  try {
    return run(std::atoi(argv[1]));
  } catch (const zb::Error& e) {
    for (const auto& p : e.problems()) std::fprintf(stderr, "error: %s\n", p.str().c_str());
    return static_cast<int>(e.code());
  }
}
