// ZB_CUDA_* options of the cuda backend: defaults, overrides, and malformed values refused with exit 2
// naming the variable.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/common/error.hpp"
#include "core/exec/cuda/cuda_options.hpp"

namespace zb::cuda {
namespace {

struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* value) : name(n) { ::setenv(n, value, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
};

TEST(CudaOptions, DefaultsAreTwoWarmUpsAndFiveRepetitions) {
  const CudaOptions o = CudaOptions::from_environment();
  EXPECT_EQ(o.warmup, 2);
  EXPECT_EQ(o.repetitions, 5);
  EXPECT_EQ(o.attention, AttentionKernel::automatic);
  EXPECT_EQ(o.verify, VerifyMode::automatic);
  EXPECT_TRUE(o.cupti);
}

TEST(CudaOptions, NicsAreMappedByTopologyNamedOrLeftOut) {
  EXPECT_TRUE(CudaOptions::from_environment().nic_sampling);
  EXPECT_TRUE(CudaOptions::from_environment().nics.empty());  // by PCI distance
  {
    const ScopedEnv n("ZB_NICS", "mlx5_2,mlx5_0:1"), i("ZB_NIC_INTERVAL_US", "250");
    const CudaOptions o = CudaOptions::from_environment();
    EXPECT_EQ(o.nics, (std::vector<std::string>{"mlx5_2", "mlx5_0:1"}));
    EXPECT_EQ(o.nic_interval, std::chrono::microseconds(250));
  }
  const ScopedEnv off("ZB_NICS", "off");
  EXPECT_FALSE(CudaOptions::from_environment().nic_sampling);
}

TEST(CudaOptions, TheCuptiTraceCanBeLeftOut) {
  const ScopedEnv c("ZB_CUDA_CUPTI", "off");
  EXPECT_FALSE(CudaOptions::from_environment().cupti);
}

TEST(CudaOptions, TheCorrectnessPassCanBeForcedOrLeftOut) {
  {
    const ScopedEnv v("ZB_CUDA_VERIFY", "on");
    EXPECT_EQ(CudaOptions::from_environment().verify, VerifyMode::on);
  }
  const ScopedEnv v("ZB_CUDA_VERIFY", "off");
  EXPECT_EQ(CudaOptions::from_environment().verify, VerifyMode::off);
  EXPECT_STREQ(to_string(VerifyMode::off), "off");
}

TEST(CudaOptions, TheEnvironmentOverridesThem) {
  const ScopedEnv w("ZB_CUDA_WARMUP", "0"), r("ZB_CUDA_REPETITIONS", "20"),
      k("ZB_CUDA_ATTENTION_KERNEL", "zb");
  const CudaOptions o = CudaOptions::from_environment();
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.repetitions, 20);
  EXPECT_EQ(o.attention, AttentionKernel::own);
  EXPECT_STREQ(to_string(o.attention), "zb");
}

void expect_refused(const char* name, const char* value, const std::string& words) {
  const ScopedEnv e(name, value);
  try {
    (void)CudaOptions::from_environment();
    ADD_FAILURE() << name << "=" << value << " was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

TEST(CudaOptions, MalformedValuesAreBadInputNamingTheVariable) {
  expect_refused("ZB_CUDA_WARMUP", "two", "not an integer");
  expect_refused("ZB_CUDA_WARMUP", "-1", "between 0 and 10000");
  expect_refused("ZB_CUDA_REPETITIONS", "0", "between 1 and 10000");
  expect_refused("ZB_CUDA_REPETITIONS", "5x", "not an integer");
  expect_refused("ZB_CUDA_ATTENTION_KERNEL", "flash", "auto, cudnn, zb");
  expect_refused("ZB_CUDA_VERIFY", "yes", "auto, on, off");
  expect_refused("ZB_CUDA_CUPTI", "1", "on, off");
  expect_refused("ZB_NIC_INTERVAL_US", "5", "between 10 and 1000000");
}

}  // namespace
}  // namespace zb::cuda
