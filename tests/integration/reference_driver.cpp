// zb_reference_driver: runs one fixed scenario (2 nodes × 2 GPUs, one NIC per GPU, odd and short
// sequences, forward and backward) on the reference backend with every strategy and writes each rank's
// output and gradient rows (dQ, dK, dV) as hex into DUMP_DIR/<system>/rank-<r>.hex. Run once in-process and
// once under `mpirun -np 4`, the two dump trees must be identical byte for byte (compare_mpi_dumps.cmake does
// that for CTest).
//
//   zb_reference_driver DUMP_DIR [threads|mpi|auto]   exit 0 verified, 2 bad input, 3 failed
//   zb_reference_driver --skip REASON                 prints REASON, exits 77 (CTest's skip code)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/integration/reference_support.hpp"

namespace {

// Under a launcher only the first process prints, so the log reads like the in-process run's.
bool first_process() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* rank = std::getenv(name)) return std::string(rank) == "0";
  return true;
}

int run(const std::filesystem::path& dump_dir, const std::string& transport) {
  using namespace zb;
  Scenario scenario = test::small_cluster(2, 2, false, 11);
  scenario.passes = Passes::fwd_bwd;
  const std::vector<std::int64_t> lengths{1, 3, 7, 100, 517, 1000, 2047};
  reference::ReferenceOptions options;
  options.transport = transport == "mpi"       ? reference::TransportChoice::mpi
                      : transport == "threads" ? reference::TransportChoice::in_process
                                               : reference::TransportChoice::automatic;
  options.dump_dir = dump_dir;
  reference::ReferenceExecutor executor(options);
  for (const SystemSpec& system : test::reference_systems(scenario.cluster)) {
    const test::ReferenceRun result = test::run_reference(executor, scenario, system, lengths);
    int routed = 0;
    for (const auto& rank : result.plan.ranks)
      for (const auto& op : rank.ops)
        routed += op.kind == plan::OpKind::send && op.route.kind == plan::RouteKind::routed;
    if (first_process())
      std::printf("%s (%d routed sends): %s\n", system.label.c_str(), routed,
                  result.trace.model_note.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--skip") {
    std::printf("skipped: %s\n", argv[2]);
    return 77;
  }
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: zb_reference_driver DUMP_DIR [threads|mpi|auto]\n");
    return 2;
  }
  try {
    return run(argv[1], argc == 3 ? argv[2] : "auto");
  } catch (const zb::Error& e) {
    for (const auto& p : e.problems()) std::fprintf(stderr, "error: %s\n", p.str().c_str());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}
