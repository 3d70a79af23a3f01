#pragma once
// Internal to the scenario loader: one reader per section of the scenario file. Each reads what it can,
// records every problem in the LoadContext and returns its best-effort result; the loader throws all
// problems together at the end. Cross-section checks take what they need as arguments (world size,
// labels), passed as nullopt/empty when that section was itself invalid, to avoid follow-on errors.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config/json_reader.hpp"
#include "core/config/scenario.hpp"
#include "core/config/system_catalog.hpp"

namespace zb::sections {

// `root` is the top-level object; each reader looks up its own key. `ok` is set to whether the section
// came out free of problems (so dependants know whether to rely on it).
ClusterSpec read_cluster(const ObjectReader& root, bool& ok);
ModelSpec read_model(const ObjectReader& root, bool& ok);
// `cluster` and `model` are passed when their sections were valid, for the divisibility checks.
ParallelismSpec read_parallelism(const ObjectReader& root, const ClusterSpec* cluster,
                                 const ModelSpec* model);
WorkloadSpec read_workload(const ObjectReader& root, const std::filesystem::path& scenario_folder);
// `facts` (world size, the model's heads, the node's GPUs) hold what the sections they come from got right;
// strategies' validation hooks check their options against them.
std::vector<SystemSpec> read_systems(const ObjectReader& root, const SystemCheckContext& facts, bool& ok);
// `systems` are the systems read; gate references are only checked when the systems were valid.
std::vector<GateSpec> read_gates(const ObjectReader& root, const std::vector<SystemSpec>& systems,
                                 bool check_labels);
// A profile file's path is resolved against `scenario_folder`; its problems name that file and the key.
HardwareProfileSpec read_hardware_profile(const ObjectReader& root,
                                          const std::filesystem::path& scenario_folder);
OutputSpec read_output(const ObjectReader& root, const std::string& scenario_name);

}  // namespace zb::sections
