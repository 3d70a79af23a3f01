#include "core/exec/cuda/cuda_options.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "core/common/error.hpp"
#include "core/exec/nic/nic_counters.hpp"

namespace zb::cuda {
namespace {

Location env_location(const char* name) {
  Location where;
  where.json_path = std::string("environment ") + name;
  return where;
}

void read_count(const char* name, int& into) {
  const char* text = std::getenv(name);
  if (text == nullptr) return;
  const char* end = text + std::strlen(text);
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc{} || ptr != end || ptr == text)
    throw_input_error(env_location(name), std::string("'") + text + "' is not an integer");
  into = value;
}

}  // namespace

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
  read_count("ZB_CUDA_WARMUP", o.warmup);
  read_count("ZB_CUDA_REPETITIONS", o.repetitions);
  if (const char* kernel = std::getenv("ZB_CUDA_ATTENTION_KERNEL")) {
    const std::string k = kernel;
    if (k == "auto")
      o.attention = AttentionKernel::automatic;
    else if (k == "cudnn")
      o.attention = AttentionKernel::cudnn;
    else if (k == "zb")
      o.attention = AttentionKernel::own;
    else
      throw_input_error(env_location("ZB_CUDA_ATTENTION_KERNEL"),
                        "'" + k + "' is not one of auto, cudnn, zb");
  }
  if (const char* verify = std::getenv("ZB_CUDA_VERIFY")) {
    const std::string v = verify;
    if (v == "auto")
      o.verify = VerifyMode::automatic;
    else if (v == "on")
      o.verify = VerifyMode::on;
    else if (v == "off")
      o.verify = VerifyMode::off;
    else
      throw_input_error(env_location("ZB_CUDA_VERIFY"), "'" + v + "' is not one of auto, on, off");
  }
  if (const char* cupti = std::getenv("ZB_CUDA_CUPTI")) {
    const std::string c = cupti;
    if (c != "on" && c != "off")
      throw_input_error(env_location("ZB_CUDA_CUPTI"), "'" + c + "' is not one of on, off");
    o.cupti = c == "on";
  }
  if (const char* nics = std::getenv("ZB_NICS")) {
    const std::string n = nics;
    o.nic_sampling = n != "off";
    if (n != "auto" && n != "off") o.nics = nic::split_nic_list(n);
  }
  int interval_us = static_cast<int>(o.nic_interval.count());
  read_count("ZB_NIC_INTERVAL_US", interval_us);
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
