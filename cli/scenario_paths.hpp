#pragma once
// The scenario arguments of `run`: files as given, and every *.json file under a folder (recursively, in
// path order, so a library runs in the same order on every machine).
#include <string>
#include <vector>

namespace zb::cli {

struct ScenarioPaths {
  std::vector<std::string> files;
  bool several = false;      // more than one argument, or any folder: the combined table is written
  std::string folder_title;  // the one folder argument's name ("paper"), empty otherwise
};

// Throws zb::Error (exit 2) for a path that does not exist and for a folder with no scenario in it.
[[nodiscard]] ScenarioPaths expand_scenario_paths(const std::vector<std::string>& arguments);

}  // namespace zb::cli
