#include "core/plan/plan_reader.hpp"

#include <functional>
#include <limits>
#include <utility>

#include "core/config/did_you_mean.hpp"

namespace zb::plan::detail {
namespace {

std::string count_text(std::size_t n, std::string_view singular) {
  return std::to_string(n) + " " + std::string(singular) + (n == 1 ? "" : "s");
}

}  // namespace

// The refs are asked for at every index a plan holds (millions in a large plan): each is built once per
// count it describes, not per call.
const Ref& PlanReader::cached(std::optional<Ref>& slot, std::string_view what, std::size_t count,
                              const std::function<std::string()>& exists) const {
  if (!slot || slot->count != count) slot = Ref{what, count, exists()};
  return *slot;
}

const Ref& PlanReader::ranks() const {
  const auto n = static_cast<std::size_t>(world_size);
  return cached(rank_ref_, "rank", n, [&] { return "world_size is " + std::to_string(world_size); });
}
const Ref& PlanReader::sequence_ref() const {
  return cached(sequence_ref_, "sequence", sequences,
                [&] { return "the plan has " + count_text(sequences, "sequence"); });
}
const Ref& PlanReader::group_ref() const {
  return cached(group_ref_, "group", groups, [&] { return "the plan has " + count_text(groups, "group"); });
}
const Ref& PlanReader::micro_batch_ref() const {
  const auto n = static_cast<std::size_t>(micro_batches);
  return cached(micro_batch_ref_, "micro-batch", n,
                [&] { return "micro_batches is " + std::to_string(micro_batches); });
}

bool PlanReader::schema_3_form(const std::string& path, std::string_view form) const {
  if (schema_version >= 3) return true;
  // Once per file: a compact file relabelled schema 2 would otherwise list its first 20 shorthands.
  if (std::exchange(older_schema_reported_, true)) return false;
  context_.add(path,
               std::string(form) + " is a schema-3 form, but the file says schema_version " +
                   std::to_string(schema_version),
               "set schema_version to 3, or write the ops, shards and blocks out as objects");
  return false;
}

std::optional<std::int64_t> PlanReader::integer(const ObjectReader& o, std::string_view key, std::int64_t min,
                                                std::int64_t max, bool required) const {
  if (required && !o.require(key)) return std::nullopt;
  return o.integer(key, min, max);
}

std::optional<double> PlanReader::non_negative(const ObjectReader& o, std::string_view key,
                                               bool required) const {
  if (required && !o.require(key)) return std::nullopt;
  return o.number(key, 0.0, std::numeric_limits<double>::max());
}

std::optional<std::string> PlanReader::text(const ObjectReader& o, std::string_view key,
                                            bool required) const {
  if (required && !o.require(key)) return std::nullopt;
  return o.string(key);
}

std::optional<std::string> PlanReader::choice(const ObjectReader& o, std::string_view key,
                                              std::span<const std::string_view> choices,
                                              bool required) const {
  if (required && !o.require(key)) return std::nullopt;
  return o.choice(key, choices);
}

std::optional<int> PlanReader::valid_index(const nlohmann::json& value, const Ref& ref) {
  // Unsigned values above INT64_MAX read as negative here, and are refused as out of range like any other.
  if (!value.is_number_integer()) return std::nullopt;
  const auto n = value.get<std::int64_t>();
  if (n < 0 || static_cast<std::uint64_t>(n) >= ref.count) return std::nullopt;
  return static_cast<int>(n);
}

void PlanReader::report_index(const nlohmann::json& value, const std::string& path, const Ref& ref) const {
  if (!value.is_number_integer()) {
    context_.add(path, "expected a " + std::string(ref.what) + " (an integer), got " + describe_json(value));
    return;
  }
  const std::string valid = ref.count == 0 ? "there is none" : "valid: 0.." + std::to_string(ref.count - 1);
  context_.add(path, std::string(ref.what) + " " + value.dump() + " does not exist: " + ref.exists + " (" +
                         valid + ")");
}

std::optional<int> PlanReader::index(const nlohmann::json& value, const std::string& path,
                                     const Ref& ref) const {
  const auto i = valid_index(value, ref);
  if (!i) report_index(value, path, ref);
  return i;
}

// Paths are built only for what is reported: a plan's valid indices are read by the million.
std::optional<int> PlanReader::index(const ObjectReader& o, std::string_view key, const Ref& ref,
                                     bool required) const {
  if (required && !o.require(key)) return std::nullopt;
  const nlohmann::json* value = o.get(key);
  if (value == nullptr) return std::nullopt;
  const auto i = valid_index(*value, ref);
  if (!i) report_index(*value, o.path_of(key), ref);
  return i;
}

std::optional<std::vector<int>> PlanReader::indices(const ObjectReader& o, std::string_view key,
                                                    const Ref& ref, bool required) const {
  const nlohmann::json* a = array(o, key, required);
  if (a == nullptr) return std::nullopt;
  std::vector<int> out;
  out.reserve(a->size());
  bool ok = true;
  for (std::size_t i = 0; i < a->size() && !enough(); ++i) {
    const auto v = valid_index((*a)[i], ref);
    if (!v) report_index((*a)[i], index_path(o.path_of(key), i), ref);
    ok = ok && v.has_value();
    if (v) out.push_back(*v);
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<std::int64_t>> PlanReader::integers(const ObjectReader& o, std::string_view key,
                                                              std::int64_t min, std::int64_t max,
                                                              bool required) const {
  const nlohmann::json* a = array(o, key, required);
  if (a == nullptr) return std::nullopt;
  std::vector<std::int64_t> out;
  bool ok = true;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const nlohmann::json& v = (*a)[i];
    const auto path = [&] { return index_path(o.path_of(key), i); };
    if (!v.is_number_integer()) {
      context_.add(path(), "expected an integer, got " + describe_json(v));
      ok = false;
    } else if (const bool huge =
                   v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
               huge || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
      context_.add(path(), "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                               ", got " + v.dump());
      ok = false;
    } else {
      out.push_back(v.get<std::int64_t>());
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::pair<std::int64_t, std::int64_t>> PlanReader::pair(const ObjectReader& o,
                                                                      std::string_view key,
                                                                      bool required) const {
  const nlohmann::json* a = array(o, key, required);
  if (a == nullptr) return std::nullopt;
  if (a->size() != 2) {
    context_.add(o.path_of(key),
                 "expected [begin, end] (two integers), got an array of " + std::to_string(a->size()));
    return std::nullopt;
  }
  const auto v = integers(o, key, 0, std::numeric_limits<std::int64_t>::max(), required);
  if (!v) return std::nullopt;
  return std::pair{(*v)[0], (*v)[1]};
}

std::optional<HeadRange> PlanReader::heads(const ObjectReader& o) const {
  const nlohmann::json* a = array(o, "heads", false);
  if (a == nullptr) return o.has("heads") ? std::nullopt : std::optional<HeadRange>(HeadRange{});
  const auto v = integers(o, "heads", -1, std::numeric_limits<int>::max(), false);
  if (!v) return std::nullopt;
  if (v->size() != 2 || (*v)[0] < 0 || ((*v)[1] != -1 && (*v)[1] <= (*v)[0])) {
    context_.add(o.path_of("heads"),
                 "expected [begin, end] with 0 <= begin < end (end -1: to the last head), got " + a->dump());
    return std::nullopt;
  }
  return HeadRange{static_cast<int>((*v)[0]), static_cast<int>((*v)[1])};
}

const nlohmann::json* PlanReader::array(const ObjectReader& o, std::string_view key, bool required) const {
  if (required && !o.require(key)) return nullptr;
  return o.array(key);
}

std::optional<std::string> kind_of(const PlanReader& r, const nlohmann::json& value, const std::string& path,
                                   std::string_view key, std::span<const std::string_view> choices) {
  LoadContext& context = r.context();
  if (!value.is_object()) {
    context.add(path, "expected an object, got " + describe_json(value));
    return std::nullopt;
  }
  const std::string key_path = child_path(path, key);
  const auto it = value.find(key);
  if (it == value.end()) {
    context.add(key_path, "missing required key", "one of " + quoted_list(choices));
    return std::nullopt;
  }
  if (!it->is_string()) {
    context.add(key_path, "expected a string, got " + describe_json(*it));
    return std::nullopt;
  }
  const auto& name = it->get_ref<const std::string&>();
  for (std::string_view c : choices) {
    if (c == name) return name;
  }
  context.add(key_path, "unknown " + std::string(key) + " \"" + printable(name) + "\"",
              suggestion_hint(name, choices));
  return std::nullopt;
}

void expect_position(const PlanReader& r, const ObjectReader& o, std::string_view key, std::size_t position,
                     std::string_view list) {
  const auto v = r.integer(o, key, 0, std::numeric_limits<std::int64_t>::max(), true);
  if (v && static_cast<std::size_t>(*v) != position) {
    r.context().add(
        o.path_of(key), "expected " + std::to_string(position) + ", got " + std::to_string(*v),
        std::string(list) + " are listed in order: the " + std::string(key) + " is the position in the list");
  }
}

}  // namespace zb::plan::detail
