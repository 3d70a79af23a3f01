#include "cli/sweep_summary.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "cli/output.hpp"
#include "cli/sweep_rows.hpp"
#include "core/common/error.hpp"
#include "reports/atomic_write.hpp"

namespace zb::cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kKind = "zeppelin-bench sweep shard";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// "iterations: 1 there, 3 here", for the first entry of the identities that differs.
std::string first_difference(const json& there, const json& here) {
  for (const auto& [key, value] : here.items()) {
    const json other = there.contains(key) ? there.at(key) : json(nullptr);
    if (other == value) continue;
    if (key == "files")
      return fmt::format("its scenario files differ ({} there, {} here)", other.size(), value.size());
    return fmt::format("{}: {} there, {} here", key, other.dump(), value.dump());
  }
  return "it is of another sweep";
}

// One shard's summary as found: its rows, or why none can be taken.
struct Found {
  enum class State { taken, absent, foreign, broken } state = State::absent;
  std::vector<ShardRow> rows;
  std::string label;  // the shard's own name for itself ("rank 1 of 2", "shard 3 of 4 (Slurm array task 3)")
  std::string why;    // when not taken
};

Found read_summary(const fs::path& path, int index, int count, const json& identity,
                   const std::vector<SweepEntry>& entries, const std::string& launch) {
  using State = Found::State;
  std::error_code ec;
  if (!fs::exists(path, ec)) return {State::absent, {}, {}, path.string() + " does not exist"};
  try {
    const json summary = json::parse(read_text(path));
    if (summary.value("kind", "") != kKind)
      return {State::broken, {}, {}, path.string() + " is not a shard's summary"};
    if (summary.at("sweep") != identity) {
      return {State::foreign,
              {},
              {},
              path.string() + " is of another sweep: " + first_difference(summary.at("sweep"), identity)};
    }
    const std::string written_by = summary.at("launch").get<std::string>();
    if (!launch.empty() && written_by != launch) {
      return {State::foreign,
              {},
              {},
              fmt::format("{} is of another job ({}; this is {})", path.string(), written_by, launch)};
    }
    Found found{State::taken, {}, summary.at("shard").at("label").get<std::string>(), ""};
    for (const json& r : summary.at("rows")) {
      const auto position = r.at("position").get<std::size_t>();
      ShardRow row{position, row_from_json(r.at("row"))};
      if (position >= entries.size() ||
          position % static_cast<std::size_t>(count) != static_cast<std::size_t>(index) ||
          row.row.file != entries[position].file) {
        return {State::broken,
                {},
                {},
                fmt::format("{} holds a row for position {} ({}), which is not this shard's", path.string(),
                            position, row.row.file)};
      }
      found.rows.push_back(std::move(row));
    }
    return found;
  } catch (const json::exception& e) {
    return {State::broken, {}, {}, fmt::format("{} cannot be read: {}", path.string(), e.what())};
  }
}

// The shards not yet found are waited for while their heartbeat changes; `found` is filled as they come.
void wait_for(const fs::path& folder, int count, const json& identity, const std::vector<SweepEntry>& entries,
              const ShardWait& wait, std::vector<Found>& found) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> beats(found.size());
  std::vector<Clock::time_point> changed(found.size(), Clock::now());
  std::vector<int> pending;
  for (int k = 0; k < count; ++k)
    if (found[k].state == Found::State::absent || found[k].state == Found::State::foreign)
      pending.push_back(k);
  if (wait.speak && !pending.empty()) {
    std::string names;
    for (const int k : pending) names += fmt::format("{}{}", names.empty() ? "" : ", ", k);
    print_progress(fmt::format("rank 0 of {}: waiting for the results of rank{} {} in {}", count,
                               pending.size() > 1 ? "s" : "", names, folder.string()));
  }
  while (!pending.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::vector<int> still;
    for (const int k : pending) {
      found[k] = read_summary(shard_summary_path(folder, k, count), k, count, identity, entries, wait.launch);
      if (found[k].state == Found::State::taken || found[k].state == Found::State::broken)
        continue;  // a broken summary was written whole (renamed into place): waiting changes nothing
      const std::string beat = read_text(shard_heartbeat_path(folder, k, count));
      if (beat != beats[k]) {
        beats[k] = beat;
        changed[k] = Clock::now();
      }
      if (Clock::now() - changed[k] < std::chrono::seconds(wait.stall_seconds)) {
        still.push_back(k);
        continue;
      }
      found[k].why = fmt::format(
          "no results, and no sign of life for {} s ({}): it died, was stopped or never started; {}",
          wait.stall_seconds,
          beats[k].empty() ? "its heartbeat file never appeared" : "its heartbeat file stopped changing",
          found[k].why);
    }
    pending = std::move(still);
  }
}

}  // namespace

json sweep_identity(const RunFlags& f, const std::vector<std::string>& files) {
  return {{"files", files},
          {"backend", f.backend},
          {"iterations", f.iterations ? json(*f.iterations) : json()},
          {"seed", f.seed ? json(*f.seed) : json()},
          {"sets", f.sets},
          {"systems", f.systems},
          {"profile", f.profile},
          {"formats", f.formats}};
}

void write_shard_summary(const fs::path& folder, const json& identity, const SweepShard& shard,
                         const std::string& launch, const std::vector<ShardRow>& rows) {
  json out_rows = json::array();
  for (const ShardRow& r : rows) out_rows.push_back({{"position", r.position}, {"row", row_to_json(r.row)}});
  const json summary = {{"kind", kKind},
                        {"schema_version", 1},
                        {"sweep", identity},
                        {"shard", {{"index", shard.index}, {"count", shard.count}, {"label", shard.label}}},
                        {"launch", launch},
                        {"rows", out_rows}};
  reports::write_file_atomically(shard_summary_path(folder, shard.index, shard.count),
                                 summary.dump(1) + "\n");
  std::error_code ignored;  // the summary is what counts; a stale heartbeat beside it is never read
  fs::remove(shard_heartbeat_path(folder, shard.index, shard.count), ignored);
}

std::vector<reports::CombinedRow> collect_shards(const fs::path& folder, int count, const json& identity,
                                                 const std::vector<SweepEntry>& entries,
                                                 const ShardWait* wait) {
  std::vector<Found> found;
  for (int k = 0; k < count; ++k) {
    found.push_back(read_summary(shard_summary_path(folder, k, count), k, count, identity, entries,
                                 wait != nullptr ? wait->launch : ""));
  }
  if (wait != nullptr) {
    wait_for(folder, count, identity, entries, *wait, found);
  } else {
    std::vector<Problem> foreign;  // --combine given other scenarios or flags than the shards ran
    for (const Found& f : found)
      if (f.state == Found::State::foreign)
        foreign.push_back({Location{folder.string(), "", 0, 0, -1}, f.why, {}});
    if (!foreign.empty()) {
      foreign.back().hint = "give --combine the scenarios and flags the shards ran with";
      throw Error(ExitCode::bad_input, std::move(foreign));
    }
  }
  std::vector<std::optional<reports::CombinedRow>> rows(entries.size());
  for (int k = 0; k < count; ++k) {
    const bool taken = found[k].state == Found::State::taken;
    const std::string name =
        taken ? found[k].label : fmt::format("{} {} of {}", wait != nullptr ? "rank" : "shard", k, count);
    for (ShardRow& r : found[k].rows) {
      if (!r.row.error.empty()) r.row.error = name + ": " + r.row.error;
      rows[r.position] = std::move(r.row);
    }
    for (std::size_t p = static_cast<std::size_t>(k); p < entries.size();
         p += static_cast<std::size_t>(count)) {
      if (rows[p]) continue;
      const std::string rerun = fmt::format(
          "rerun its scenarios: the same command with --shard {}/{}, then with --combine", k, count);
      const std::string why = taken ? "its results have no row for this scenario" : found[k].why;
      rows[p] = reports::failed_row(entries[p].scenario, entries[p].file, name + ": " + why + "; " + rerun);
    }
  }
  std::vector<reports::CombinedRow> out;
  for (auto& row : rows) out.push_back(std::move(*row));
  return out;
}

ExitCode table_exit_code(const std::vector<reports::CombinedRow>& rows) {
  ExitCode code = ExitCode::ok;
  for (const reports::CombinedRow& row : rows) {
    if (!row.error.empty()) return ExitCode::runtime;
    if (!row.gates_passed) code = ExitCode::check_failed;
  }
  return code;
}

}  // namespace zb::cli
