#pragma once
// Settings of the reference executor that the scenario does not carry: the small attention dimensions
// it computes with (the plan's shapes come from the scenario's model, but real numerics at those sizes
// would be slow on a CPU and prove nothing more), the verification tolerance, the receive timeout and
// the transport. ExecContext carries none of them, so make_executor uses the defaults below overridden
// by ZB_REF_* environment variables (docs/REFERENCE.md lists them); tests construct them directly.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config/scenario.hpp"

namespace zb::reference {

enum class TransportChoice {
  automatic,   // MPI when launched by mpirun/srun and built with MPI, otherwise in-process threads
  in_process,  // one thread per rank in this process
  mpi,         // one process per rank; fails when this build has no MPI
};

struct ReferenceOptions {
  int heads = 2;
  int kv_heads = 2;  // heads % kv_heads == 0; fewer than heads is the GQA case
  int head_dim = 16;
  // Largest accepted error of an output row, relative to that row's largest reference value. Float32
  // blockwise attention over ≤ 4096 keys stays near 1e-6; a missing or doubled block is off by O(1).
  double tolerance = 1e-4;
  // How long a rank waits without any message arriving before it reports what it was waiting for. A
  // wrong plan (a send to the wrong peer) must end in a clear error, never a hang.
  std::chrono::milliseconds receive_timeout{10000};
  TransportChoice transport = TransportChoice::automatic;
  // When set, every rank writes its verified output rows as hex into <dump_dir>/<system>/rank-<r>.hex,
  // so two runs (in-process and MPI) can be compared byte for byte.
  std::filesystem::path dump_dir;
  // GEMM ops run the CPU GEMM on at most this many rows and columns: they stand in for the projections,
  // their timing is not meant to be realistic.
  int gemm_max_dim = 32;
  // ZB_REF_DIMS=model: compute the scenario's own model instead of the small dims above (its heads,
  // kv_heads and head dim, GEMMs at full size), so that the wall-clock times are those of the work the
  // cost model prices and the run can report the simulator's error (docs/REFERENCE.md, "Measured against
  // the simulator"). Meant for small models: the CPU does every FLOP.
  bool model_dims = false;
  // The largest batch the backend accepts (checked before anything runs, exit 2 above it): it is meant
  // for small batches. Memory grows with the tokens (about 3.6 KB per token, all ranks together, at the
  // default dims); time with the tokens and with Σ length² (the float32 run and the float64 check are
  // both quadratic per sequence). Measured on 2 cores, three systems: 131072 tokens with Σ length² 9.4e8
  // took 63 s and 0.49 GB (docs/REFERENCE.md has the figures).
  std::int64_t max_tokens = kDefaultMaxTokens;
  double max_sum_squares = kDefaultMaxSumSquares;  // Σ over the batch's sequences of length²
  // Measured NIC loads (MPI runs only): the NICs whose byte counters the first rank of each node samples
  // while the layer runs, in NIC index order ("rail0,rail1" on the emulated cluster, "mlx5_0,mlx5_1"
  // on an InfiniBand host; ZB_NICS=auto takes every InfiniBand port, else every netdev but lo). Empty: no
  // sampling. `nic_interval` is the sampling period.
  std::vector<std::string> nics;
  bool nics_auto = false;
  std::chrono::microseconds nic_interval{1000};
  // How a transfer between nodes uses the NICs, for the bytes each NIC is expected to carry: `fabric`,
  // out on the sender's NIC and in on the receiver's (a switched, rail-optimised network); `sender_rail`,
  // out and in on the sender's rail (one cable per rail between two nodes: the emulated cluster).
  enum class NicPairing { fabric, sender_rail };
  NicPairing nic_pairing = NicPairing::fabric;
  [[nodiscard]] bool samples_nics() const { return nics_auto || !nics.empty(); }

  static constexpr std::int64_t kDefaultMaxTokens = 131072;
  static constexpr double kDefaultMaxSumSquares = 1.0e9;

  // The defaults, overridden by ZB_REF_HEADS, ZB_REF_KV_HEADS, ZB_REF_HEAD_DIM, ZB_REF_DIMS (small|model),
  // ZB_REF_TOLERANCE, ZB_REF_TIMEOUT_S, ZB_REF_TRANSPORT (auto|threads|mpi), ZB_REF_DUMP_DIR,
  // ZB_REF_MAX_TOKENS, ZB_REF_MAX_SUM_SQ, ZB_NICS, ZB_NIC_INTERVAL_US and ZB_NIC_PAIRING
  // (fabric|sender_rail). A malformed value is bad input (exit 2) naming the variable.
  [[nodiscard]] static ReferenceOptions from_environment();
  // The options a run of `model` uses: with model_dims, the model's attention dims and uncapped GEMMs;
  // otherwise these options unchanged.
  [[nodiscard]] ReferenceOptions resolved_for(const ModelSpec& model) const;
  // Why the run does not compute `model` as the cost model prices it (the dims it computes instead, GEMMs
  // capped, a model dtype other than the float32 it computes in); empty when it does.
  [[nodiscard]] std::string stand_in_for(const ModelSpec& model, std::int64_t largest_gemm_dim) const;

  // Exit 2 when the dimensions are unusable (non-positive, heads not a multiple of kv_heads).
  void validate() const;
};

}  // namespace zb::reference
