#pragma once
// Helpers shared by the workload tests: scenarios built in code (the scenario parser is another module)
// and temporary files that clean up after themselves.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/rng.hpp"
#include "core/config/scenario.hpp"
#include "core/workload/workload.hpp"

namespace zb::testing {

inline Scenario scenario_with_dataset(std::string dataset, std::uint64_t seed = 1) {
  Scenario scenario;
  scenario.name = "workload-test";
  scenario.seed = seed;
  scenario.workload.source = WorkloadSource::dataset;
  scenario.workload.dataset = std::move(dataset);
  return scenario;
}

inline Scenario scenario_with_distribution(const DistributionSpec& distribution, std::uint64_t seed = 1) {
  Scenario scenario = scenario_with_dataset("", seed);
  scenario.workload.source = WorkloadSource::distribution;
  scenario.workload.distribution = distribution;
  return scenario;
}

inline std::vector<std::int64_t> draw_many(const LengthSampler& sampler, std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int64_t> lengths(n);
  for (auto& length : lengths) length = sampler.draw(rng);
  return lengths;
}

// A file under the system temporary folder, removed when the object goes out of scope. The process id
// keeps parallel ctest processes apart; within one test, give every file its own name.
class TempFile {
 public:
  TempFile(std::string_view name, std::string_view content)
      : path_(std::filesystem::temp_directory_path() /
              ("zb-workload-test-" + std::to_string(::getpid()) + "-" + std::string(name))) {
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace zb::testing
