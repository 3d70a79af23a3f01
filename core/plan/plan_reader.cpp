#include "core/plan/plan_reader.hpp"

#include <limits>

#include "core/config/did_you_mean.hpp"

namespace zb::plan::detail {
namespace {

std::string count_text(std::size_t n, std::string_view singular) {
  return std::to_string(n) + " " + std::string(singular) + (n == 1 ? "" : "s");
}

}  // namespace

Ref PlanReader::ranks() const {
  return {"rank", static_cast<std::size_t>(world_size), "world_size is " + std::to_string(world_size)};
}
Ref PlanReader::sequence_ref() const {
  return {"sequence", sequences, "the plan has " + count_text(sequences, "sequence")};
}
Ref PlanReader::group_ref() const {
  return {"group", groups, "the plan has " + count_text(groups, "group")};
}
Ref PlanReader::micro_batch_ref() const {
  return {"micro-batch", static_cast<std::size_t>(micro_batches),
          "micro_batches is " + std::to_string(micro_batches)};
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

std::optional<int> PlanReader::index(const nlohmann::json& value, const std::string& path,
                                     const Ref& ref) const {
  if (!value.is_number_integer()) {
    context_.add(path, "expected a " + std::string(ref.what) + " (an integer), got " + describe_json(value));
    return std::nullopt;
  }
  // Unsigned values above INT64_MAX read as negative here, and are refused as out of range like any other.
  const auto n = value.get<std::int64_t>();
  if (n < 0 || static_cast<std::uint64_t>(n) >= ref.count) {
    const std::string valid = ref.count == 0 ? "there is none" : "valid: 0.." + std::to_string(ref.count - 1);
    context_.add(path, std::string(ref.what) + " " + value.dump() + " does not exist: " + ref.exists + " (" +
                           valid + ")");
    return std::nullopt;
  }
  return static_cast<int>(n);
}

std::optional<int> PlanReader::index(const ObjectReader& o, std::string_view key, const Ref& ref,
                                     bool required) const {
  if (required && !o.require(key)) return std::nullopt;
  const nlohmann::json* value = o.get(key);
  if (value == nullptr) return std::nullopt;
  return index(*value, o.path_of(key), ref);
}

std::optional<std::vector<int>> PlanReader::indices(const ObjectReader& o, std::string_view key,
                                                    const Ref& ref, bool required) const {
  const nlohmann::json* a = array(o, key, required);
  if (a == nullptr) return std::nullopt;
  std::vector<int> out;
  out.reserve(a->size());
  bool ok = true;
  for (std::size_t i = 0; i < a->size() && !enough(); ++i) {
    const auto v = index((*a)[i], index_path(o.path_of(key), i), ref);
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
    const std::string path = index_path(o.path_of(key), i);
    if (!v.is_number_integer()) {
      context_.add(path, "expected an integer, got " + describe_json(v));
      ok = false;
    } else if (const bool huge =
                   v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
               huge || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
      context_.add(path, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                             v.dump());
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
