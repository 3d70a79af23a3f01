// libFuzzer target: scenario text (JSON with comments) through the validating loader, as `validate` and
// `run` read a scenario file.
//
// The real strategies are not linked: they would double the fuzz build (strategies and lowering) for a
// few lines of option checks. Two stand-in systems are registered instead, with every option type the
// catalog knows and a hook of the usual kind (a degree dividing the world size), so that the loader's
// generic system, option, label and gate validation is reached; the seed corpus names them. Nor are the
// backends (SimGrid, MPI): their names are registered as the backends' registrations would, so that a
// corpus scenario's "backend" is checked against the same kind of list.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/config/backend_names.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/config/system_catalog.hpp"
#include "fuzz_support.hpp"

namespace {

std::vector<zb::OptionProblem> degree_divides_world(const nlohmann::json& options,
                                                    const zb::SystemCheckContext& context) {
  const nlohmann::json& degree = options.at("degree");
  if (!context.world_size || !degree.is_number_integer()) return {};
  if (*context.world_size % degree.get<std::int64_t>() == 0) return {};
  return {{"degree", "degree does not divide the world size", ""}};
}

void register_stand_in_systems() {
  using zb::OptionType;
  zb::register_system(zb::SystemInfo{
      .name = "fuzz-flags",
      .description = "stand-in with boolean and choice options",
      .order = 0,
      .baseline = false,
      .options = {{.name = "routing",
                   .type = OptionType::boolean,
                   .default_value = true,
                   .choices = {},
                   .description = ""},
                  {.name = "partitioning",
                   .type = OptionType::choice,
                   .default_value = "hierarchical",
                   .choices = {"hierarchical", "flat"},
                   .description = ""}},
      .validate = {},
      .label = {},
  });
  zb::register_system(zb::SystemInfo{
      .name = "fuzz-cp",
      .description = "stand-in baseline with a degree",
      .order = 10,
      .baseline = true,
      .options = {{.name = "degree",
                   .type = OptionType::positive_int_or_auto,
                   .default_value = "auto",
                   .choices = {},
                   .description = ""}},
      .validate = degree_divides_world,
      .label = {},
  });
}

}  // namespace

// Called once before the first input, while the catalog may still be filled.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  register_stand_in_systems();
  zb::register_backend_name("sim", 10);
  zb::register_backend_name("reference", 20);
  zb::register_backend_name("cuda", 30);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A folder that does not exist: a relative lengths_file or hardware_profile resolves to nothing there.
  return zb::fuzz::accept_input_errors(
      [&] { (void)zb::parse_scenario(text, "zeppelin-fuzz-missing-folder/scenario.json"); });
}
