#include "core/exec/cuda/cuda_options.hpp"

#include <cstdlib>

#include "core/common/env_reader.hpp"
#include "core/common/error.hpp"
#include "core/exec/nic/nic_counters.hpp"

namespace zb::cuda {

const char* to_string(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::automatic:
      return "auto";
    case AttentionKernel::cudnn:
      return "cudnn";
    case AttentionKernel::own:
      return "zb";
  }
  return "?";
}

const char* to_string(VerifyMode m) {
  switch (m) {
    case VerifyMode::automatic:
      return "auto";
    case VerifyMode::on:
      return "on";
    case VerifyMode::off:
      return "off";
  }
  return "?";
}

CudaOptions CudaOptions::from_environment() {
  CudaOptions o;
  read_env_integer("ZB_CUDA_WARMUP", o.warmup);
  read_env_integer("ZB_CUDA_REPETITIONS", o.repetitions);
  read_env_choice(
      "ZB_CUDA_ATTENTION_KERNEL",
      {{"auto", AttentionKernel::automatic}, {"cudnn", AttentionKernel::cudnn}, {"zb", AttentionKernel::own}},
      o.attention);
  read_env_choice("ZB_CUDA_VERIFY",
                  {{"auto", VerifyMode::automatic}, {"on", VerifyMode::on}, {"off", VerifyMode::off}},
                  o.verify);
  read_env_choice("ZB_CUDA_CUPTI", {{"on", true}, {"off", false}}, o.cupti);
  if (const char* nics = std::getenv("ZB_NICS")) {
    const std::string n = nics;
    o.nic_sampling = n != "off";
    if (n != "auto" && n != "off") o.nics = nic::split_nic_list(n);
  }
  int interval_us = static_cast<int>(o.nic_interval.count());
  read_env_integer("ZB_NIC_INTERVAL_US", interval_us);
  o.nic_interval = std::chrono::microseconds(interval_us);
  o.validate();
  return o;
}

void CudaOptions::validate() const {
  ProblemList problems;
  if (warmup < 0 || warmup > 10000)
    problems.add(env_location("ZB_CUDA_WARMUP"),
                 "must be between 0 and 10000, got " + std::to_string(warmup));
  if (repetitions < 1 || repetitions > 10000)
    problems.add(env_location("ZB_CUDA_REPETITIONS"),
                 "must be between 1 and 10000, got " + std::to_string(repetitions));
  if (nic_interval < std::chrono::microseconds(10) || nic_interval > std::chrono::seconds(1))
    problems.add(env_location("ZB_NIC_INTERVAL_US"),
                 "must be between 10 and 1000000, got " + std::to_string(nic_interval.count()));
  problems.throw_if_any();
}

}  // namespace zb::cuda
