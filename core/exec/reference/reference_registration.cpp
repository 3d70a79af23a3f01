// The `reference` backend's registration (core/exec/backend_registry.hpp): CPU numerics over threads or
// MPI. Its options are ReferenceOptions' fields, overridden by the ZB_REF_* and ZB_NIC* variables that
// ReferenceOptions::from_environment reads (docs/REFERENCE.md), so the values below are read back from
// that struct and cannot drift from what the executor runs with.
#include "core/exec/backend_registry.hpp"
#include "core/exec/reference/reference_executor.hpp"
#include "core/exec/reference/reference_options.hpp"

namespace zb::reference {
namespace {

const char* transport_text(TransportChoice transport) {
  switch (transport) {
    case TransportChoice::automatic:
      return "auto";
    case TransportChoice::in_process:
      return "threads";
    case TransportChoice::mpi:
      return "mpi";
  }
  return "?";
}

// In the order of `options` below.
BackendOptionValues values_of(const ReferenceOptions& o) {
  return {{"heads", std::to_string(o.heads)},
          {"kv_heads", std::to_string(o.kv_heads)},
          {"head_dim", std::to_string(o.head_dim)},
          {"dims", o.model_dims ? "model" : "small"},
          {"tolerance", option_text(o.tolerance)},
          {"timeout_s", option_text(static_cast<double>(o.receive_timeout.count()) / 1000.0)},
          {"transport", transport_text(o.transport)},
          {"dump_dir", o.dump_dir.string()},
          {"max_tokens", std::to_string(o.max_tokens)},
          {"max_sum_sq", option_text(o.max_sum_squares)},
          {"nics", o.nics_auto ? "auto" : option_text(o.nics)},
          {"nic_interval_us", option_text(static_cast<double>(o.nic_interval.count()))},
          {"nic_pairing", o.nic_pairing == ReferenceOptions::NicPairing::fabric ? "fabric" : "sender_rail"}};
}

BackendOptionValues defaults() {
  return values_of(ReferenceOptions{});
}
BackendOptionValues configured() {
  return values_of(ReferenceOptions::from_environment());
}

std::unique_ptr<Executor> make_reference_executor() {
  return std::make_unique<ReferenceExecutor>(ReferenceOptions::from_environment());
}

using Type = BackendOptionType;

const BackendRegistration registration{BackendInfo{
    .name = "reference",
    .description = "CPU numerics, a thread or an MPI process per rank, outputs checked in float64 "
                   "(docs/REFERENCE.md)",
    .simulated = false,
    .order = 20,
    .options =
        {{"heads", Type::integer, {}, "ZB_REF_HEADS", "attention heads computed (dims=small)"},
         {"kv_heads", Type::integer, {}, "ZB_REF_KV_HEADS", "K/V heads; must divide heads (GQA when fewer)"},
         {"head_dim", Type::integer, {}, "ZB_REF_HEAD_DIM", "head dimension computed (dims=small)"},
         {"dims",
          Type::choice,
          {"small", "model"},
          "ZB_REF_DIMS",
          "small: the dims above; model: the scenario's model at full size, for the simulator's error"},
         {"tolerance",
          Type::number,
          {},
          "ZB_REF_TOLERANCE",
          "largest error of an output row, relative to its largest reference value"},
         {"timeout_s",
          Type::number,
          {},
          "ZB_REF_TIMEOUT_S",
          "seconds a rank waits for a message before saying what it waited for"},
         {"transport",
          Type::choice,
          {"auto", "threads", "mpi"},
          "ZB_REF_TRANSPORT",
          "auto: MPI when launched by mpirun/srun and built with MPI, else threads"},
         {"dump_dir",
          Type::text,
          {},
          "ZB_REF_DUMP_DIR",
          "folder for every rank's verified output rows as hex (empty: none)"},
         {"max_tokens", Type::integer, {}, "ZB_REF_MAX_TOKENS", "largest batch accepted, in tokens"},
         {"max_sum_sq",
          Type::number,
          {},
          "ZB_REF_MAX_SUM_SQ",
          "largest batch accepted, as the sum of squared sequence lengths"},
         {"nics",
          Type::list,
          {},
          "ZB_NICS",
          "NICs sampled for measured NIC loads under MPI, in NIC order; auto: every one; empty: none"},
         {"nic_interval_us", Type::number, {}, "ZB_NIC_INTERVAL_US", "NIC counter sampling period"},
         {"nic_pairing",
          Type::choice,
          {"fabric", "sender_rail"},
          "ZB_NIC_PAIRING",
          "which NICs a transfer between nodes is expected on: the sender's and receiver's, or the "
          "sender's rail"}},
    .defaults = defaults,
    .configured = configured,
    .factory = make_reference_executor}};

}  // namespace
}  // namespace zb::reference
