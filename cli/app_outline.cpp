#include "cli/app_outline.hpp"

#include <algorithm>

namespace zb::cli {
namespace {

// CLI11's type name carries its validators' descriptions: "TEXT:{sim,reference,cuda}" for a closed set.
std::vector<std::string> choices_of(const std::string& type_name) {
  const std::size_t open = type_name.find('{');
  const std::size_t close = type_name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  std::vector<std::string> out;
  std::string item;
  for (const char c : type_name.substr(open + 1, close - open - 1)) {
    if (c == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

OptionOutline outline_of(const CLI::Option& option) {
  OptionOutline out;
  for (const std::string& name : option.get_lnames()) out.names.push_back("--" + name);
  for (const std::string& name : option.get_snames()) out.names.push_back("-" + name);
  if (option.get_positional() && !option.nonpositional()) out.positional = option.get_name();
  out.description = option.get_description();
  const std::string type_name = option.get_type_name();
  if (option.get_type_size() != 0) {
    out.value = type_name.substr(0, type_name.find(':'));
    out.choices = choices_of(type_name);
    out.files = out.value.find("FILE") != std::string::npos || out.value.find("DIR") != std::string::npos;
  }
  return out;
}

}  // namespace

AppOutline outline_of(const CLI::App& app) {
  AppOutline out;
  out.name = app.get_name();
  out.description = app.get_description();
  out.footer = app.get_footer();
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    CommandOutline c{command->get_name(), command->get_description(), {}};
    for (const CLI::Option* option : command->get_options()) {
      if (option == command->get_help_ptr()) continue;
      c.options.push_back(outline_of(*option));
    }
    std::stable_partition(c.options.begin(), c.options.end(),
                          [](const OptionOutline& o) { return o.positional.empty(); });
    out.commands.push_back(std::move(c));
  }
  return out;
}

}  // namespace zb::cli
