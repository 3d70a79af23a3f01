// NCCL loaded at run time (see nccl_runtime.hpp for why).
#include "kernels/gpucheck/nccl_runtime.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace zb::kernels::gpucheck {

namespace {

// python3's site-packages folders (purelib, platlib, the site and user folders), one per line; empty when
// there is no python3. Asked only when the loader's own path has no libnccl.so.2.
std::vector<std::string> python_site_folders() {
  std::vector<std::string> folders;
  FILE* pipe = popen(
      "python3 -c \"import site,sysconfig;p=sysconfig.get_paths();"
      "print('\\n'.join([p['purelib'],p['platlib'],site.getusersitepackages()]+site.getsitepackages()))\" "
      "2>/dev/null",
      "r");
  if (pipe == nullptr) return folders;
  std::array<char, 4096> line{};
  while (std::fgets(line.data(), static_cast<int>(line.size()), pipe) != nullptr) {
    std::string folder(line.data());
    while (!folder.empty() && (folder.back() == '\n' || folder.back() == '\r')) folder.pop_back();
    if (!folder.empty()) folders.push_back(folder);
  }
  static_cast<void>(pclose(pipe));
  return folders;
}

template <typename Function>
bool resolve(void* handle, const char* name, Function& out) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) return false;
  // POSIX guarantees that a dlsym result converts to a function pointer.
  out = reinterpret_cast<Function>(symbol);
  return true;
}

}  // namespace

Status NcclApi::check(ncclResult_t result, const std::string& what) const {
  if (result == ncclSuccess) return Status::success();
  return Status::failure(what + ": " + (error_string != nullptr ? error_string(result) : "NCCL error") +
                         " (ncclResult_t " + std::to_string(static_cast<int>(result)) + ")");
}

Status load_nccl(NcclApi& api) {
  std::vector<std::string> candidates{"libnccl.so.2"};
  for (const std::string& folder : python_site_folders())
    candidates.push_back(folder + "/nvidia/nccl/lib/libnccl.so.2");
  candidates.emplace_back("libnccl.so");
  void* handle = nullptr;
  std::string tried;
  for (const std::string& candidate : candidates) {
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      api.library = candidate;
      break;
    }
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + (why != nullptr ? std::string(why) : candidate);
  }
  if (handle == nullptr) return Status::failure("libnccl.so.2 not loadable (" + tried + ")");
  // The file the loader actually mapped, for the record.
  if (Dl_info info{}; resolve(handle, "ncclGetVersion", api.get_version) &&
                      dladdr(reinterpret_cast<void*>(api.get_version), &info) != 0 &&
                      info.dli_fname != nullptr)
    api.library = info.dli_fname;
  const bool all = resolve(handle, "ncclGetVersion", api.get_version) &&
                   resolve(handle, "ncclGetErrorString", api.error_string) &&
                   resolve(handle, "ncclCommInitAll", api.comm_init_all) &&
                   resolve(handle, "ncclCommDestroy", api.comm_destroy) &&
                   resolve(handle, "ncclGroupStart", api.group_start) &&
                   resolve(handle, "ncclGroupEnd", api.group_end) && resolve(handle, "ncclSend", api.send) &&
                   resolve(handle, "ncclRecv", api.recv);
  if (!all) return Status::failure(api.library + " lacks an NCCL entry point (ncclSend/ncclRecv need 2.7+)");
  if (Status st = api.check(api.get_version(&api.version), "ncclGetVersion"); !st) return st;
  return Status::success();
}

}  // namespace zb::kernels::gpucheck
