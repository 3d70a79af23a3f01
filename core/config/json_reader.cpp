#include "core/config/json_reader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

#include "core/config/did_you_mean.hpp"

namespace zb {

void LoadContext::add(std::string_view json_path, std::string what, std::string hint) {
  problems.add(Location{file.string(), std::string(json_path)}, std::move(what), std::move(hint));
}

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    out += (byte < 0x20 || byte == 0x7F) ? '?' : c;
  }
  return out;
}

std::string child_path(std::string_view parent, std::string_view key) {
  const std::string safe_key = printable(key);
  return parent.empty() ? safe_key : fmt::format("{}.{}", parent, safe_key);
}

std::string index_path(std::string_view parent, std::size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

std::string describe_json(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return fmt::format("a boolean ({})", value.get<bool>());
    case nlohmann::json::value_t::string:
      return fmt::format("a string (\"{}\")", printable(value.get_ref<const std::string&>()));
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return fmt::format("a number ({})", value.dump());
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    default:
      return "an unsupported value";
  }
}

namespace {

// What keeps a run from finishing with this quantity (units.hpp's bounds), or "" when nothing does. Zero is
// the caller's concern (`positive`), so only non-zero rates are held to the floors.
std::string finishable_problem(double value, QuantityKind kind) {
  if (kind == QuantityKind::bandwidth && value > 0 && value < min_bandwidth)
    return "is below the smallest bandwidth a run can finish with, " + format_bandwidth(min_bandwidth);
  if (kind == QuantityKind::compute && value > 0 && value < min_compute)
    return "is below the smallest compute rate a run can finish with, " + format_flops(min_compute);
  if (kind == QuantityKind::latency && value > max_latency)
    return "is above the largest latency a run can finish with, " + format_seconds(max_latency);
  return {};
}

}  // namespace

ObjectReader::ObjectReader(const nlohmann::json& object, std::string path, LoadContext& context,
                           std::vector<std::string_view> allowed)
    : path_(std::move(path)), context_(context) {
  if (!object.is_object()) {
    context_.add(path_, "expected an object, got " + describe_json(object));
    return;
  }
  object_ = &object;
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (known) continue;
    const std::string best = closest_match(key, allowed);
    context_.add(
        path_of(key), "unknown key",
        best.empty() ? "allowed keys here: " + quoted_list(allowed) : "did you mean \"" + best + "\"?");
  }
}

bool ObjectReader::has(std::string_view key) const {
  return get(key) != nullptr;
}

const nlohmann::json* ObjectReader::get(std::string_view key) const {
  if (object_ == nullptr) return nullptr;
  const auto it = object_->find(key);
  return it == object_->end() ? nullptr : &*it;
}

bool ObjectReader::require(std::string_view key, std::string_view hint) const {
  if (object_ == nullptr) return false;  // the wrong type is already reported
  if (has(key)) return true;
  context_.add(path_of(key), "missing required key", std::string(hint));
  return false;
}

void ObjectReader::wrong_type(std::string_view key, const nlohmann::json& value,
                              std::string_view expected) const {
  context_.add(path_of(key), fmt::format("expected {}, got {}", expected, describe_json(value)));
}

std::optional<std::string> ObjectReader::string(std::string_view key) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    wrong_type(key, *value, "a string");
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<std::string> ObjectReader::non_empty_string(std::string_view key) const {
  std::optional<std::string> text = string(key);
  if (text && text->empty()) {
    context_.add(path_of(key), "must not be empty");
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> ObjectReader::choice(std::string_view key,
                                                std::span<const std::string_view> choices) const {
  std::optional<std::string> text = string(key);
  if (!text) return std::nullopt;
  for (std::string_view c : choices) {
    if (c == *text) return text;
  }
  context_.add(path_of(key), fmt::format("\"{}\" is not one of {}", printable(*text), quoted_list(choices)),
               suggestion_hint(*text, choices));
  return std::nullopt;
}

std::optional<bool> ObjectReader::boolean(std::string_view key) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    wrong_type(key, *value, "true or false");
    return std::nullopt;
  }
  return value->get<bool>();
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key, std::int64_t min,
                                                  std::int64_t max) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number_integer()) {
    wrong_type(key, *value, "an integer");
    return std::nullopt;
  }
  const bool too_big =
      value->is_number_unsigned() &&
      value->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const std::int64_t n = too_big ? std::numeric_limits<std::int64_t>::max() : value->get<std::int64_t>();
  if (n < min || n > max) {
    context_.add(path_of(key), fmt::format("must be between {} and {}, got {}", min, max, value->dump()));
    return std::nullopt;
  }
  return n;
}

std::optional<std::uint64_t> ObjectReader::unsigned_integer(std::string_view key) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number_integer()) {
    wrong_type(key, *value, "an integer >= 0");
    return std::nullopt;
  }
  if (!value->is_number_unsigned()) {  // nlohmann stores non-negative literals as unsigned
    context_.add(path_of(key), fmt::format("must be >= 0, got {}", value->dump()));
    return std::nullopt;
  }
  return value->get<std::uint64_t>();
}

std::optional<double> ObjectReader::number(std::string_view key, double min, double max,
                                           bool min_exclusive) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) {
    wrong_type(key, *value, "a number");
    return std::nullopt;
  }
  const double x = value->get<double>();
  const bool below = min_exclusive ? !(x > min) : !(x >= min);
  if (below || !(x <= max)) {
    const char* open = min_exclusive ? "(" : "[";
    context_.add(path_of(key), fmt::format("must be in {}{}, {}], got {}", open, min, max, value->dump()));
    return std::nullopt;
  }
  return x;
}

std::optional<double> ObjectReader::quantity(std::string_view key, QuantityKind kind, bool positive) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    // The common mistake is a bare number; show the form that is expected instead.
    context_.add(path_of(key), fmt::format("got {}: {}", describe_json(*value), expected_form(kind)),
                 "quantities are strings with a unit");
    return std::nullopt;
  }
  QuantityParse parsed = parse_quantity(value->get_ref<const std::string&>(), kind);
  if (!parsed.value) {
    context_.add(path_of(key), printable(parsed.error, 300));
    return std::nullopt;
  }
  if (positive && *parsed.value <= 0) {
    context_.add(path_of(key), "must be greater than zero");
    return std::nullopt;
  }
  if (std::string bound = finishable_problem(*parsed.value, kind); !bound.empty()) {
    context_.add(path_of(key),
                 fmt::format("\"{}\" {}", printable(value->get_ref<const std::string&>()), bound),
                 "no run could finish with it: simulated times would overflow the clock's resolution");
    return std::nullopt;
  }
  return parsed.value;
}

std::optional<ObjectReader> ObjectReader::object(std::string_view key,
                                                 std::vector<std::string_view> allowed) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_object()) {
    wrong_type(key, *value, "an object");
    return std::nullopt;
  }
  return ObjectReader(*value, path_of(key), context_, std::move(allowed));
}

const nlohmann::json* ObjectReader::array(std::string_view key) const {
  const nlohmann::json* value = get(key);
  if (value == nullptr) return nullptr;
  if (!value->is_array()) {
    wrong_type(key, *value, "an array");
    return nullptr;
  }
  return value;
}

}  // namespace zb
