#include "cli/sweep_shard.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/common/error.hpp"

namespace zb::cli {
namespace {

std::optional<int> whole_number(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

SweepShard shard(int index, int count, const char* kind) {
  return {index, count, false, fmt::format("{} {} of {}", kind, index, count)};
}

// The Slurm job array task's place in its array: the array must be one evenly stepped range (0-15,
// 1-31:2; a %limit on concurrent tasks changes nothing), or the places are not 0..N-1.
SweepShard slurm_array_shard(const EnvLookup& env) {
  const auto variable = [&](const char* name, std::optional<int> fallback) {
    const char* text = env(name);
    if (text == nullptr) {
      if (fallback) return *fallback;
      throw_input_error(
          {"--shard", "", 0, 0, -1},
          std::string("slurm-array: ") + name + " is not set, so this is no Slurm job array task",
          "submit with `sbatch --array=0-N` (N + 1 tasks), or give --shard I/N");
    }
    const auto value = whole_number(text);
    if (!value)
      throw_input_error({"--shard", "", 0, 0, -1},
                        fmt::format("slurm-array: {}=\"{}\" is not a non-negative integer", name, text),
                        "give --shard I/N");
    return *value;
  };
  const int id = variable("SLURM_ARRAY_TASK_ID", std::nullopt);
  const int count = variable("SLURM_ARRAY_TASK_COUNT", std::nullopt);
  const int min = variable("SLURM_ARRAY_TASK_MIN", std::nullopt);
  const int max = variable("SLURM_ARRAY_TASK_MAX", std::nullopt);
  const int step = variable("SLURM_ARRAY_TASK_STEP", 1);
  if (step <= 0 || id < min || id > max || (id - min) % step != 0 || count != (max - min) / step + 1 ||
      (max - min) % step != 0) {
    throw_input_error(
        {"--shard", "", 0, 0, -1},
        fmt::format("slurm-array: the array's IDs are not one evenly stepped range (task {}, IDs {} to {} "
                    "step {}, {} tasks)",
                    id, min, max, step, count),
        "submit with `--array=0-N` (or A-B:S), or give each task --shard I/N");
  }
  SweepShard s = shard((id - min) / step, count, "shard");
  s.label += fmt::format(" (Slurm array task {})", id);
  return s;
}

// (I, N) of "sweep-shard-I-of-N.json" or ".alive"; none for any other name.
std::optional<std::pair<int, int>> shard_file_name(const std::string& name) {
  constexpr std::string_view prefix = "sweep-shard-";
  if (!name.starts_with(prefix)) return std::nullopt;
  const std::size_t of = name.find("-of-", prefix.size());
  const std::size_t dot = name.rfind('.');
  if (of == std::string::npos || dot == std::string::npos || dot < of) return std::nullopt;
  const std::string_view extension = std::string_view(name).substr(dot);
  if (extension != ".json" && extension != ".alive") return std::nullopt;
  const auto index = whole_number(std::string_view(name).substr(prefix.size(), of - prefix.size()));
  const auto count = whole_number(std::string_view(name).substr(of + 4, dot - of - 4));
  if (!index || !count) return std::nullopt;
  return std::pair{*index, *count};
}

}  // namespace

SweepShard parse_shard_flag(const std::string& text, const EnvLookup& env) {
  if (text == "slurm-array") return slurm_array_shard(env);
  const std::size_t slash = text.find('/');
  const auto index = whole_number(std::string_view(text).substr(0, slash));
  const auto count =
      slash == std::string::npos ? std::nullopt : whole_number(std::string_view(text).substr(slash + 1));
  if (!index || !count || *count == 0) {
    throw_input_error({"--shard", "", 0, 0, -1}, "\"" + text + "\" is not I/N",
                      "give the shard's index and the number of shards, counted from 0: --shard 0/4 to "
                      "--shard 3/4 (or --shard slurm-array in a Slurm job array)");
  }
  if (*index >= *count) {
    throw_input_error({"--shard", "", 0, 0, -1},
                      fmt::format("shard {} of {}: shards are counted from 0, so the last is {}/{}", *index,
                                  *count, *count - 1, *count),
                      "give --shard I/N with I below N");
  }
  return shard(*index, *count, "shard");
}

SweepShard rank_shard(const Launch& launch) {
  SweepShard s = shard(launch.rank, launch.world_size, "rank");
  s.ranks = true;
  return s;
}

bool in_shard(std::size_t position, const SweepShard& shard) {
  return position % static_cast<std::size_t>(shard.count) == static_cast<std::size_t>(shard.index);
}

std::string launch_identity(const EnvLookup& env) {
  for (const char* name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})
    if (const char* value = env(name); value != nullptr && *value != '\0') return value;
  const char* job = env("SLURM_JOB_ID");
  const char* step = env("SLURM_STEP_ID");
  if (job != nullptr && step != nullptr) return std::string(job) + "." + step;
  return "";
}

std::filesystem::path shard_summary_path(const std::filesystem::path& folder, int index, int count) {
  return folder / fmt::format("sweep-shard-{}-of-{}.json", index, count);
}

std::filesystem::path shard_heartbeat_path(const std::filesystem::path& folder, int index, int count) {
  return folder / fmt::format("sweep-shard-{}-of-{}.alive", index, count);
}

void clear_shard_files(const std::filesystem::path& folder, const SweepShard& shard) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto place = shard_file_name(name);
    if (place && (place->second != shard.count || place->first == shard.index)) {
      std::error_code ignored;  // a file that cannot go fails the write of this shard's own, later
      std::filesystem::remove(it->path(), ignored);
    }
  }
}

int shard_count_in(const std::filesystem::path& folder) {
  std::set<int> counts;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (const auto place = shard_file_name(name); place && name.ends_with(".json"))
      counts.insert(place->second);
  }
  if (counts.empty()) {
    throw_input_error({folder.string(), "", 0, 0, -1},
                      "--combine: the folder holds no shard results (sweep-shard-I-of-N.json)",
                      "run the shards first, with the same scenarios, flags and --out: --shard I/N for I = 0 "
                      "to N-1 (or --shard slurm-array in a Slurm job array), then this command");
  }
  if (counts.size() > 1) {
    throw_input_error({folder.string(), "", 0, 0, -1},
                      fmt::format("--combine: the folder holds the results of sweeps of {} shards",
                                  fmt::join(counts, ", ")),
                      "remove the sweep-shard-*-of-N.* files of the sweep that is not this one");
  }
  return *counts.begin();
}

Heartbeat::Heartbeat(const std::filesystem::path& folder, const SweepShard& shard)
    : path_(shard_heartbeat_path(folder, shard.index, shard.count).string()) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);  // a folder that cannot be made fails the summary's write
  thread_ = std::jthread([path = path_.c_str()](const std::stop_token& stop) {
    unsigned long long beat = 0;
    while (!stop.stop_requested()) {
      char text[24];
      const auto [end, error] = std::to_chars(text, text + sizeof text - 1, ++beat);
      *end = '\n';
      if (const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); fd >= 0) {
        if (::write(fd, text, static_cast<std::size_t>(end + 1 - text)) < 0) {
        }  // a missed beat is one the next replaces
        ::close(fd);
      }
      for (int tick = 0; tick < 10 && !stop.stop_requested(); ++tick)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

// The thread is joined first (members go in reverse order), so path_ outlives its every use.
Heartbeat::~Heartbeat() = default;

}  // namespace zb::cli
