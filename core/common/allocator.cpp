#include "core/common/allocator.hpp"

#include <dlfcn.h>
#include <gnu/libc-version.h>

#include <cstdlib>

namespace zb {

ProcessAllocator process_allocator() {
  // Looked up by name, so nothing here links mimalloc: a binary without it finds neither symbol.
  using Version = int (*)();
  using InHeap = bool (*)(const void*);
  const auto version = reinterpret_cast<Version>(dlsym(RTLD_DEFAULT, "mi_version"));
  const auto in_heap = reinterpret_cast<InHeap>(dlsym(RTLD_DEFAULT, "mi_is_in_heap_region"));
  if (version != nullptr && in_heap != nullptr) {
    void* probe = std::malloc(16);
    const bool replaced = in_heap(probe);
    std::free(probe);
    if (replaced) {
      const int v = version();  // 209 = 2.0.9
      return {"mimalloc",
              std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10)};
    }
  }
  return {"glibc", gnu_get_libc_version()};
}

}  // namespace zb
