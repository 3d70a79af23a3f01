#include "cli/scenario_paths.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/common/error.hpp"

namespace zb::cli {

ScenarioPaths expand_scenario_paths(const std::vector<std::string>& arguments) {
  namespace fs = std::filesystem;
  ScenarioPaths out;
  int folders = 0;
  for (const std::string& argument : arguments) {
    std::error_code ec;
    if (!fs::is_directory(argument, ec)) {
      out.files.push_back(argument);  // a missing or unreadable file is reported by the scenario loader
      continue;
    }
    ++folders;
    std::vector<std::string> found;
    for (fs::recursive_directory_iterator it(argument, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && it->path().extension() == ".json")
        found.push_back(it->path().generic_string());
    }
    if (ec) {
      throw_input_error({argument, "", 0, 0, -1}, "cannot list the folder: " + ec.message(),
                        "check that the folder is readable");
    }
    if (found.empty()) {
      throw_input_error({argument, "", 0, 0, -1}, "the folder holds no scenario file (*.json)",
                        "give scenario files or a folder of them, e.g. scenarios/paper");
    }
    std::sort(found.begin(), found.end());
    out.files.insert(out.files.end(), found.begin(), found.end());
  }
  out.several = out.files.size() > 1 || folders > 0;
  if (folders == 1 && arguments.size() == 1) {
    out.folder_title = fs::path(arguments.front()).lexically_normal().generic_string();
    while (!out.folder_title.empty() && out.folder_title.back() == '/') out.folder_title.pop_back();
  }
  return out;
}

}  // namespace zb::cli
