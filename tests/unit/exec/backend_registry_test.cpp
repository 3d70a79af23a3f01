// The backend registry (core/exec/backend_registry.hpp): what each backend folder registers, the
// executors it makes by name, and the option values it reports for provenance, defaults and environment.
#include "core/exec/backend_registry.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "core/common/error.hpp"

namespace zb {
namespace {

// Sets an environment variable for one test and restores its absence after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

const ConfiguredOption& option_named(const std::vector<ConfiguredOption>& options, const std::string& name) {
  for (const ConfiguredOption& option : options)
    if (option.name == name) return option;
  throw std::runtime_error("no option " + name);
}

TEST(BackendRegistry, ListsSimReferenceAndCudaInOrderWithTheirTiming) {
  std::vector<std::string> names;
  for (const BackendInfo& backend : backend_catalog()) names.push_back(backend.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sim", "reference", "cuda"}));
  EXPECT_TRUE(is_simulated_backend("sim"));
  EXPECT_FALSE(is_simulated_backend("reference"));
  EXPECT_FALSE(is_simulated_backend("cuda"));
  EXPECT_FALSE(is_simulated_backend("no-such-backend"));
  EXPECT_TRUE(find_backend("sim")->options.empty());
}

// The 18 variables that configured the executors before the registry, each now an option of a backend
// (ZB_NICS and ZB_NIC_INTERVAL_US of both measured backends).
TEST(BackendRegistry, EveryEnvironmentVariableIsAnOptionWithADescription) {
  std::set<std::string> variables;
  for (const BackendInfo& backend : backend_catalog()) {
    for (const BackendOption& option : backend.options) {
      EXPECT_EQ(option.environment.rfind("ZB_", 0), 0U) << backend.name << "." << option.name;
      EXPECT_FALSE(option.description.empty()) << backend.name << "." << option.name;
      EXPECT_EQ(option.type == BackendOptionType::choice, !option.choices.empty()) << option.name;
      variables.insert(option.environment);
    }
  }
  EXPECT_EQ(variables,
            (std::set<std::string>{
                "ZB_REF_HEADS", "ZB_REF_KV_HEADS", "ZB_REF_HEAD_DIM", "ZB_REF_DIMS", "ZB_REF_TOLERANCE",
                "ZB_REF_TIMEOUT_S", "ZB_REF_TRANSPORT", "ZB_REF_DUMP_DIR", "ZB_REF_MAX_TOKENS",
                "ZB_REF_MAX_SUM_SQ", "ZB_NICS", "ZB_NIC_INTERVAL_US", "ZB_NIC_PAIRING", "ZB_CUDA_WARMUP",
                "ZB_CUDA_REPETITIONS", "ZB_CUDA_ATTENTION_KERNEL", "ZB_CUDA_VERIFY", "ZB_CUDA_CUPTI"}));
}

TEST(BackendRegistry, DefaultsAreTheOptionsStructsOwn) {
  const BackendOptionValues reference = find_backend("reference")->defaults();
  EXPECT_EQ(reference.front(), (std::pair<std::string, std::string>{"heads", "2"}));
  const std::vector<ConfiguredOption> configured = configured_backend_options("reference");
  EXPECT_EQ(option_named(configured, "transport").value, "auto");
  EXPECT_EQ(option_named(configured, "tolerance").value, "0.0001");
  EXPECT_EQ(option_named(configured, "timeout_s").value, "10");
  EXPECT_EQ(option_named(configured, "nics").value, "");
  EXPECT_FALSE(option_named(configured, "heads").from_environment);
  const std::vector<ConfiguredOption> cuda = configured_backend_options("cuda");
  EXPECT_EQ(option_named(cuda, "repetitions").value, "5");
  EXPECT_EQ(option_named(cuda, "nics").value, "auto");
  EXPECT_TRUE(configured_backend_options("sim").empty());
  EXPECT_TRUE(configured_backend_options("no-such-backend").empty());
}

TEST(BackendRegistry, TheEnvironmentOverridesADefaultAndProvenanceSaysSo) {
  const ScopedEnv heads("ZB_REF_HEADS", "4");
  const ScopedEnv transport("ZB_REF_TRANSPORT", "threads");
  const ScopedEnv nics("ZB_NICS", "off");
  const std::vector<ConfiguredOption> reference = configured_backend_options("reference");
  EXPECT_EQ(option_named(reference, "heads").value, "4");
  EXPECT_TRUE(option_named(reference, "heads").from_environment);
  EXPECT_EQ(option_named(reference, "heads").environment, "ZB_REF_HEADS");
  EXPECT_EQ(option_named(reference, "transport").value, "threads");
  EXPECT_FALSE(option_named(reference, "kv_heads").from_environment);
  EXPECT_EQ(option_named(configured_backend_options("cuda"), "nics").value, "off");
}

TEST(BackendRegistry, AMalformedVariableIsBadInputNamingIt) {
  const ScopedEnv heads("ZB_CUDA_WARMUP", "two");
  try {
    (void)configured_backend_options("cuda");
    FAIL() << "ZB_CUDA_WARMUP=two was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("environment ZB_CUDA_WARMUP"), std::string::npos) << e.what();
  }
}

TEST(BackendRegistry, MakesEachAvailableBackendByNameAndRefusesOthers) {
  for (const BackendInfo& backend : backend_catalog()) {
    if (backend.available()) {
      EXPECT_EQ(make_executor(backend.name)->backend(), backend.name);
      continue;
    }
    try {
      (void)make_executor(backend.name);
      FAIL() << backend.name << " is not in this build";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find("is not available in this build"), std::string::npos) << e.what();
    }
  }
  try {
    (void)make_executor("no-such-backend");
    FAIL() << "an unknown backend was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("sim, reference, cuda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zb
