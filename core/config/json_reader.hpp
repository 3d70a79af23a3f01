#pragma once
// A small helper for reading one JSON object of a scenario with strict checks. It knows the object's
// JSON path (`cluster.nic`), reports unknown keys with a "did you mean" suggestion, and turns every wrong
// type or out-of-range value into a Problem naming file and path, so that a loader can read on and report
// every problem of the file at once. Getters return std::nullopt when the key is absent or wrong.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/error.hpp"
#include "core/config/units.hpp"

namespace zb {

// The state of loading one file: where messages point and what was found wrong so far.
struct LoadContext {
  std::filesystem::path file;
  ProblemList problems;

  void add(std::string_view json_path, std::string what, std::string hint = {});
};

[[nodiscard]] std::string child_path(std::string_view parent, std::string_view key);  // cluster + nic
[[nodiscard]] std::string index_path(std::string_view parent, std::size_t index);     // systems + 2

// Text from a file made safe and short for a message: control characters become '?', long text is cut.
[[nodiscard]] std::string printable(std::string_view text, std::size_t max_chars = 60);

// What a JSON value is, for "expected X, got Y" messages: `a string ("8")`, `a number (1.5)`, `an array`.
[[nodiscard]] std::string describe_json(const nlohmann::json& value);

class ObjectReader {
 public:
  // `object` must outlive the reader. If it is not an object, that is reported and every getter returns
  // nullopt. Keys not in `allowed` are reported at once, with the closest allowed key as a suggestion.
  ObjectReader(const nlohmann::json& object, std::string path, LoadContext& context,
               std::vector<std::string_view> allowed);

  [[nodiscard]] bool valid() const { return object_ != nullptr; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string path_of(std::string_view key) const { return child_path(path_, key); }
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] const nlohmann::json* get(std::string_view key) const;  // nullptr when absent
  [[nodiscard]] LoadContext& context() const { return context_; }

  // Reports "missing required key" when absent; returns whether the key is present.
  bool require(std::string_view key, std::string_view hint = {}) const;

  [[nodiscard]] std::optional<std::string> string(std::string_view key) const;
  [[nodiscard]] std::optional<std::string> non_empty_string(std::string_view key) const;
  [[nodiscard]] std::optional<std::string> choice(std::string_view key,
                                                  std::span<const std::string_view> choices) const;
  [[nodiscard]] std::optional<bool> boolean(std::string_view key) const;
  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key, std::int64_t min,
                                                    std::int64_t max) const;
  [[nodiscard]] std::optional<std::uint64_t> unsigned_integer(std::string_view key) const;
  // A finite number in [min, max]; with `min_exclusive`, in (min, max].
  [[nodiscard]] std::optional<double> number(std::string_view key, double min, double max,
                                             bool min_exclusive = false) const;
  // A quantity string with a unit; `positive` rejects zero (a bandwidth of 0 is meaningless).
  [[nodiscard]] std::optional<double> quantity(std::string_view key, QuantityKind kind, bool positive) const;
  // The nested object at `key`, or nullopt (reported) when it is not an object. Absent → nullopt, silent.
  [[nodiscard]] std::optional<ObjectReader> object(std::string_view key,
                                                   std::vector<std::string_view> allowed) const;
  // The array at `key`, or nullptr (reported) when it is not an array. Absent → nullptr, silent.
  [[nodiscard]] const nlohmann::json* array(std::string_view key) const;

 private:
  void wrong_type(std::string_view key, const nlohmann::json& value, std::string_view expected) const;

  const nlohmann::json* object_ = nullptr;
  std::string path_;
  LoadContext& context_;
};

}  // namespace zb
