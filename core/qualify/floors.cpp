#include "core/qualify/floors.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

#include "core/common/error.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/units.hpp"

namespace zb::qualify {
namespace {

constexpr std::array<Probe, 6> kProbes{Probe::gemm,     Probe::attention, Probe::p2p_intra,
                                       Probe::p2p_rail, Probe::all_rails, Probe::routed};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The class a figure is compared within: routed transfers against the direct rails of the same size.
std::pair<Probe, std::string> class_of(const Measurement& m) {
  return {m.probe == Probe::routed ? Probe::p2p_rail : m.probe, m.shape};
}

Location key_location(const std::filesystem::path& file, const std::string& key) {
  Location where;
  where.file = file.string();
  where.json_path = key;
  return where;
}

bool is_fraction(const nlohmann::json& value) {
  return value.is_number() && value.get<double>() >= 0 && value.get<double>() <= 1;
}

// "nominal_fraction": one fraction for every probe, or an object of fractions per probe; 0 turns a
// probe's nominal floor off.
void read_nominal_fraction(const nlohmann::json& value, const Location& where, FloorSpec& spec,
                           ProblemList& problems) {
  if (is_fraction(value)) {
    for (const Probe p : kProbes) spec.nominal_fraction[p] = value.get<double>();
    return;
  }
  if (!value.is_object()) {
    problems.add(where, "expected a fraction in [0, 1] or an object of them per probe, got " + value.dump());
    return;
  }
  for (const auto& [name, fraction] : value.items()) {
    Location at = where;
    at.json_path += "." + name;
    const auto probe =
        std::find_if(kProbes.begin(), kProbes.end(), [&](Probe p) { return name == to_string(p); });
    if (probe == kProbes.end())
      problems.add(at, "unknown probe", "probes: gemm, attention, p2p-intra, p2p-rail, all-rails, routed");
    else if (!is_fraction(fraction))
      problems.add(at, "expected a fraction in [0, 1], got " + fraction.dump());
    else
      spec.nominal_fraction[*probe] = fraction.get<double>();
  }
}

}  // namespace

FloorSpec read_floors_file(const std::filesystem::path& file) {
  const nlohmann::json json = read_jsonc_file(file);
  if (!json.is_object()) throw_input_error(key_location(file, "$"), "a floors file is a JSON object");
  FloorSpec spec;
  spec.file = file.string();
  ProblemList problems;
  for (const auto& [key, value] : json.items()) {
    const Location where = key_location(file, key);
    if (key == "relative_to_median") {
      if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() <= 1))
        problems.add(where, "expected a fraction in (0, 1], got " + value.dump());
      else
        spec.relative = value.get<double>();
      continue;
    }
    if (key == "nominal_fraction") {
      read_nominal_fraction(value, where, spec, problems);
      continue;
    }
    if (key == "max_latency") {
      const QuantityParse q =
          value.is_string() ? parse_quantity(value.get<std::string>(), QuantityKind::latency)
                            : QuantityParse{std::nullopt, "expected a latency string such as \"500 us\""};
      if (q.value)
        spec.max_latency = *q.value;
      else
        problems.add(where, q.error);
      continue;
    }
    const auto probe =
        std::find_if(kProbes.begin(), kProbes.end(), [&](Probe p) { return key == to_string(p); });
    if (probe == kProbes.end()) {
      problems.add(where, "unknown key",
                   "keys: relative_to_median, nominal_fraction, max_latency, gemm, attention, p2p-intra, "
                   "p2p-rail, all-rails, routed");
      continue;
    }
    const QuantityKind kind =
        *probe == Probe::gemm || *probe == Probe::attention ? QuantityKind::compute : QuantityKind::bandwidth;
    const QuantityParse q = value.is_string()
                                ? parse_quantity(value.get<std::string>(), kind)
                                : QuantityParse{std::nullopt, "expected " + expected_form(kind)};
    if (q.value)
      spec.absolute[*probe] = *q.value;
    else
      problems.add(where, q.error);
  }
  problems.throw_if_any();
  return spec;
}

std::vector<Verdict> evaluate(const std::vector<Measurement>& measurements, const FloorSpec& floors) {
  std::map<std::pair<Probe, std::string>, std::vector<double>> classes;
  for (const Measurement& m : measurements)
    if (m.probe != Probe::routed) classes[{m.probe, m.shape}].push_back(m.value);
  std::vector<Verdict> verdicts;
  for (const Measurement& m : measurements) {
    Verdict v{.measurement = m, .floor = 0, .floor_source = {}, .passed = true};
    const auto [probe, shape] = class_of(m);
    const auto peers = classes.find({probe, shape});
    if (peers != classes.end() && !peers->second.empty()) {
      v.floor = floors.relative * median(peers->second);
      v.floor_source = fmt::format("{} × median of {} ({}, {} figures)", floors.relative, to_string(probe),
                                   shape, peers->second.size());
    }
    if (const auto a = floors.absolute.find(m.probe); a != floors.absolute.end() && a->second > v.floor) {
      v.floor = a->second;
      v.floor_source = "floors file " + floors.file;
    }
    if (const auto n = floors.nominal.find(m.probe);
        m.reaches_nominal && n != floors.nominal.end() && n->second > v.floor) {
      v.floor = n->second;
      v.floor_source = floors.nominal_source.at(m.probe);
    }
    v.passed = m.value >= v.floor;
    if (floors.max_latency && m.latency > *floors.max_latency) {
      v.passed = false;
      v.floor_source += fmt::format("; latency {:.3g} µs above the file's {:.3g} µs", m.latency * 1e6,
                                    *floors.max_latency * 1e6);
    }
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

}  // namespace zb::qualify
