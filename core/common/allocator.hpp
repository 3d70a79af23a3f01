#pragma once
// Which allocator serves this process's malloc: the zeppelin-bench executable links mimalloc ahead of libc
// when the build found it (cmake/Dependencies.cmake, zb_link_allocator), since planning time depends on it
// (docs/STRATEGIES.md, "Planning time"). Asked at run time, not taken from the build, so that a binary that
// does not link it (a test, a sanitized build) never claims it.
#include <string>

namespace zb {

struct ProcessAllocator {
  std::string name;     // "mimalloc" or "glibc"
  std::string version;  // "2.0.9"; the C library's version for glibc
};

// mimalloc only when it is loaded and a fresh malloc block lies in its heap (it really replaced malloc).
[[nodiscard]] ProcessAllocator process_allocator();

}  // namespace zb
