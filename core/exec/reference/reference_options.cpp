#include "core/exec/reference/reference_options.hpp"

#include <cstdlib>
#include <limits>
#include <string>

#include "core/common/env_reader.hpp"
#include "core/common/error.hpp"
#include "core/exec/nic/nic_counters.hpp"

namespace zb::reference {

ReferenceOptions ReferenceOptions::from_environment() {
  ReferenceOptions o;
  read_env_number("ZB_REF_HEADS", o.heads);
  read_env_number("ZB_REF_KV_HEADS", o.kv_heads);
  read_env_number("ZB_REF_HEAD_DIM", o.head_dim);
  read_env_choice("ZB_REF_DIMS", {{"small", false}, {"model", true}}, o.model_dims);
  read_env_number("ZB_REF_TOLERANCE", o.tolerance);
  double timeout_seconds = static_cast<double>(o.receive_timeout.count()) / 1000.0;
  read_env_number("ZB_REF_TIMEOUT_S", timeout_seconds);
  o.receive_timeout = std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000.0));
  read_env_choice("ZB_REF_TRANSPORT",
                  {{"auto", TransportChoice::automatic},
                   {"threads", TransportChoice::in_process},
                   {"mpi", TransportChoice::mpi}},
                  o.transport);
  read_env_number("ZB_REF_MAX_TOKENS", o.max_tokens);
  read_env_number("ZB_REF_MAX_SUM_SQ", o.max_sum_squares);
  if (const char* dir = std::getenv("ZB_REF_DUMP_DIR")) o.dump_dir = dir;
  if (const char* nics = std::getenv("ZB_NICS")) {
    if (std::string(nics) == "auto")
      o.nics_auto = true;
    else
      o.nics = nic::split_nic_list(nics);
  }
  double interval_us = static_cast<double>(o.nic_interval.count());
  read_env_number("ZB_NIC_INTERVAL_US", interval_us);
  o.nic_interval = std::chrono::microseconds(static_cast<long long>(interval_us));
  read_env_choice("ZB_NIC_PAIRING",
                  {{"fabric", NicPairing::fabric}, {"sender_rail", NicPairing::sender_rail}}, o.nic_pairing);
  o.validate();
  return o;
}

ReferenceOptions ReferenceOptions::resolved_for(const ModelSpec& model) const {
  ReferenceOptions o = *this;
  if (!model_dims) return o;
  o.heads = model.heads;
  o.kv_heads = model.kv_heads;
  o.head_dim = model.head_dim();
  o.gemm_max_dim = std::numeric_limits<int>::max();
  return o;
}

std::string ReferenceOptions::stand_in_for(const ModelSpec& model, std::int64_t largest_gemm_dim) const {
  std::string computed;
  if (heads != model.heads || kv_heads != model.kv_heads || head_dim != model.head_dim()) {
    computed = "attention over " + std::to_string(heads) + " heads (" + std::to_string(kv_heads) +
               " K/V) of dim " + std::to_string(head_dim) + " instead of the model's " +
               std::to_string(model.heads) + " (" + std::to_string(model.kv_heads) + ") of dim " +
               std::to_string(model.head_dim());
  }
  if (largest_gemm_dim > gemm_max_dim) {
    if (!computed.empty()) computed += "; ";
    computed += "GEMMs capped at " + std::to_string(gemm_max_dim) + " rows and columns";
  }
  if (model.dtype_bytes != 4) {
    if (!computed.empty()) computed += "; ";
    computed += "float32 numbers where the model's " + model.dtype + " moves " +
                std::to_string(model.dtype_bytes) + " bytes per element";
  }
  return computed;
}

void ReferenceOptions::validate() const {
  ProblemList problems;
  if (heads < 1)
    problems.add(env_location("ZB_REF_HEADS"), "must be at least 1, got " + std::to_string(heads));
  if (kv_heads < 1 || (heads >= 1 && heads % kv_heads != 0))
    problems.add(
        env_location("ZB_REF_KV_HEADS"),
        "must divide the number of heads (" + std::to_string(heads) + "), got " + std::to_string(kv_heads));
  if (head_dim < 1)
    problems.add(env_location("ZB_REF_HEAD_DIM"), "must be at least 1, got " + std::to_string(head_dim));
  if (!(tolerance > 0)) problems.add(env_location("ZB_REF_TOLERANCE"), "must be positive");
  if (receive_timeout.count() < 1) problems.add(env_location("ZB_REF_TIMEOUT_S"), "must be at least 1 ms");
  if (max_tokens < 1)
    problems.add(env_location("ZB_REF_MAX_TOKENS"), "must be at least 1, got " + std::to_string(max_tokens));
  if (!(max_sum_squares >= 1)) problems.add(env_location("ZB_REF_MAX_SUM_SQ"), "must be at least 1");
  if (nic_interval.count() < 100)
    problems.add(env_location("ZB_NIC_INTERVAL_US"),
                 "must be at least 100 µs, got " + std::to_string(nic_interval.count()));
  if (gemm_max_dim < 1) problems.add(Location{}, "gemm_max_dim must be at least 1");
  problems.throw_if_any();
}

}  // namespace zb::reference
