#include "core/exec/cuda/cuda_world.hpp"

#include <cuda_runtime_api.h>

#include <cstring>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/launch/launcher.hpp"
#ifdef ZEPPELIN_HAVE_MPI
#include <mpi.h>
#endif

namespace zb::cuda {
namespace {

const char* const kLaunchHint =
    "start one process per GPU: mpirun -np N zeppelin-bench run … --backend cuda (or srun -n N)";

#ifdef ZEPPELIN_HAVE_MPI
void check_mpi(int code, int rank, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail(rank, std::string("backend cuda: ") + call +
                 " failed: " + std::string(text, static_cast<std::size_t>(length)));
}
#endif

// The process's world (CudaWorld::get makes it, CudaWorld::shutdown ends it) and whether it has ended.
std::unique_ptr<CudaWorld>& the_world() {
  static std::unique_ptr<CudaWorld> world;
  return world;
}
bool world_ended = false;

}  // namespace

int usable_device_count() {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess || count == 0) {
    const std::string why = code != cudaSuccess ? cudaGetErrorString(code) : "0 devices";
    throw Error(ExitCode::runtime, Location{},
                "backend cuda: no usable CUDA device (cudaGetDeviceCount: " + why + "); use --backend sim",
                "check nvidia-smi, the driver and CUDA_VISIBLE_DEVICES on this node");
  }
  return count;
}

CudaWorld& CudaWorld::get(int program_world_size) {
  std::unique_ptr<CudaWorld>& world = the_world();
  if (world_ended)
    throw Error(ExitCode::runtime, Location{},
                "backend cuda: the process's CUDA world (NCCL, MPI) was already shut down and cannot start "
                "again",
                "this is a bug: CudaWorld::shutdown must run only once the command is done with the GPU");
  const int devices = usable_device_count();
  const Launch& launch = process_launch();
  const int processes = launch.multi_process() ? launch.world_size : 1;
  if (processes != program_world_size) {
    const std::string started =
        launch.multi_process()
            ? std::to_string(processes) + " processes were started (" + launch.launcher + ")"
            : std::string("this process was started alone (no launcher)");
    throw Error(ExitCode::bad_input, Location{},
                "backend cuda runs one process per GPU: " + started + " but the scenario's cluster has " +
                    std::to_string(program_world_size) + " GPUs",
                "run mpirun -np " + std::to_string(program_world_size) + " (or srun -n " +
                    std::to_string(program_world_size) +
                    "), or change cluster.nodes / cluster.gpus_per_node");
  }
  if (launch.local_size > devices) {
    throw Error(ExitCode::bad_input, Location{},
                "backend cuda: " + std::to_string(launch.local_size) + " processes on this node but only " +
                    std::to_string(devices) + " visible CUDA devices; two ranks on one GPU are not supported",
                "start at most one process per GPU on each node (check CUDA_VISIBLE_DEVICES and the "
                "launcher's mapping)");
  }
  if (!world) world.reset(new CudaWorld(launch.rank, processes, launch.local_rank));
  return *world;
}

CudaWorld::CudaWorld(int rank, int size, int device) : rank_(rank), size_(size), device_(device) {
  check_cuda(cudaSetDevice(device_), rank_, "cudaSetDevice",
             "backend cuda: choosing GPU " + std::to_string(device_));
  cudaDeviceProp props{};
  check_cuda(cudaGetDeviceProperties(&props, device_), rank_, "cudaGetDeviceProperties", "backend cuda");
  gpu_name_ = props.name;
  ncclUniqueId id{};
  if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), rank_, "ncclGetUniqueId", "backend cuda: NCCL bootstrap");
  if (size_ > 1) {
#ifdef ZEPPELIN_HAVE_MPI
    int already = 0;
    MPI_Initialized(&already);
    if (!already) {
      int provided = 0;
      check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), rank_, "MPI_Init_thread");
      mpi_initialised_here_ = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int mpi_size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    if (mpi_size != size_)
      throw Error(ExitCode::bad_input, Location{},
                  "backend cuda: the launcher started " + std::to_string(size_) +
                      " processes but MPI sees a world of " + std::to_string(mpi_size) +
                      ": this binary's MPI is not the launcher's",
                  "use the mpirun of the MPI this build was linked against");
    check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD), rank_, "MPI_Bcast (NCCL unique id)");
#else
    throw Error(ExitCode::bad_input, Location{},
                "backend cuda: " + std::to_string(size_) +
                    " processes were started but this build has no MPI to "
                    "bootstrap NCCL across them",
                "install MPI (libopenmpi-dev) and reconfigure");
#endif
  }
  check_nccl(ncclCommInitRank(&world_, size_, id, rank_), rank_, "ncclCommInitRank",
             "backend cuda: the world communicator of " + std::to_string(size_) + " ranks");
}

std::vector<std::string> CudaWorld::shutdown(bool after_failure) {
  std::unique_ptr<CudaWorld>& world = the_world();
  world_ended = world_ended || world != nullptr;
  if (!world) return {};
  std::vector<std::string> problems = world->end(after_failure);
  world.reset();  // its destructor finds nothing left to end
  return problems;
}

// A safety net for a command that took the world and did not call shutdown(): it ran, so nothing failed.
CudaWorld::~CudaWorld() {
  (void)end(false);
}

std::vector<std::string> CudaWorld::end(bool after_failure) {
  std::vector<std::string> problems;
  const char* call = after_failure ? "ncclCommAbort" : "ncclCommDestroy";
  const auto end_comm = [&](ncclComm_t& comm, const std::string& which) {
    if (comm == nullptr) return;
    const ncclResult_t code = after_failure ? ncclCommAbort(comm) : ncclCommDestroy(comm);
    if (code != ncclSuccess)
      problems.push_back("backend cuda: rank " + std::to_string(rank_) + ": " + call + " of " + which +
                         " failed: " + ncclGetErrorString(code));
    comm = nullptr;  // ended or not, it is not used again
  };
  // Split communicators before the world one they came from; maps iterate alike on every rank.
  for (auto& [members, comm] : groups_)
    end_comm(comm, "the communicator of a collective over " + std::to_string(members.size()) + " ranks");
  for (auto& [gpus, comm] : rails_) end_comm(comm, "the rail communicator");
  end_comm(world_, "the world communicator");
#ifdef ZEPPELIN_HAVE_MPI
  if (mpi_initialised_here_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !(after_failure && size_ > 1)) {
      if (const int code = MPI_Finalize(); code != MPI_SUCCESS)
        problems.push_back("backend cuda: rank " + std::to_string(rank_) +
                           ": MPI_Finalize failed (MPI error " + std::to_string(code) + ")");
    }
    mpi_initialised_here_ = false;
  }
#endif
  return problems;
}

ncclComm_t CudaWorld::group(const std::vector<int>& members) {
  if (const auto it = groups_.find(members); it != groups_.end()) return it->second;
  int key = -1;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i] == rank_) key = static_cast<int>(i);
  ncclComm_t comm = nullptr;
  check_nccl(
      ncclCommSplit(world_, key >= 0 ? 0 : NCCL_SPLIT_NOCOLOR, key, &comm, nullptr), rank_, "ncclCommSplit",
      "backend cuda: the communicator of a collective over " + std::to_string(members.size()) + " ranks");
  groups_.emplace(members, comm);
  return comm;
}

ncclComm_t CudaWorld::rail(int gpus_per_node) {
  if (const auto it = rails_.find(gpus_per_node); it != rails_.end()) return it->second;
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommSplit(world_, rank_ % gpus_per_node, rank_ / gpus_per_node, &comm, nullptr), rank_,
             "ncclCommSplit",
             "backend cuda: the rail communicator of local rank " + std::to_string(rank_ % gpus_per_node));
  rails_.emplace(gpus_per_node, comm);
  return comm;
}

void CudaWorld::agree(const std::optional<Error>& failure, const std::string& during) const {
  const double mine = failure ? static_cast<double>(failure->code()) : 0.0;
  const double worst = max_over_ranks({mine}).front();
  if (failure) throw *failure;
  if (worst > 0)
    throw Error(static_cast<ExitCode>(static_cast<int>(worst)), Location{},
                "backend cuda: another rank failed " + during + " (its error is printed by that rank)");
}

std::vector<double> CudaWorld::max_over_ranks(std::vector<double> values) const {
#ifdef ZEPPELIN_HAVE_MPI
  if (size_ > 1)
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                            MPI_COMM_WORLD),
              rank_, "MPI_Allreduce (pass times)");
#endif
  return values;
}

std::vector<std::vector<char>> CudaWorld::all_gather(const std::vector<char>& mine) const {
  std::vector<std::vector<char>> all(static_cast<std::size_t>(size_));
  if (size_ == 1) {
    all[0] = mine;
    return all;
  }
#ifdef ZEPPELIN_HAVE_MPI
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), rank_,
            "MPI_Allgather (trace sizes)");
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::vector<char> joined(static_cast<std::size_t>(total));
  check_mpi(MPI_Allgatherv(mine.data(), length, MPI_BYTE, joined.data(), lengths.data(), offsets.data(),
                           MPI_BYTE, MPI_COMM_WORLD),
            rank_, "MPI_Allgatherv (trace events)");
  for (int r = 0; r < size_; ++r) {
    const auto begin = joined.begin() + offsets[static_cast<std::size_t>(r)];
    all[static_cast<std::size_t>(r)].assign(begin, begin + lengths[static_cast<std::size_t>(r)]);
  }
#endif
  return all;
}

}  // namespace zb::cuda
