// Allocation failure reaches C++ as std::bad_alloc, as the standard says it does, also under mimalloc.
//
// Why this file: the mimalloc the build links (Debian's libmimalloc 2.0.9, a C library) replaces
// operator new with its own, which calls std::get_new_handler through a weak stub of its own that
// returns null, and then calls abort() ("cannot throw in plain C"). Out of memory under an address-space
// limit (`ulimit -v`, a batch system's memory request) was therefore a silent SIGABRT (exit 134) instead
// of an exception the CLI turns into a message and exit 3 (core/common/out_of_memory.hpp).
//
// The replacements below are the ones libstdc++ itself defines (loop on malloc, call the new handler,
// throw std::bad_alloc), on top of malloc, which mimalloc serves: the executable's definitions come first
// in symbol resolution, so they replace both mimalloc's and libstdc++'s for the whole process. The delete
// operators stay mimalloc's (mi_free), which frees what its malloc gave. The nothrow forms stay
// mimalloc's too: they return null without aborting. zb_link_allocator (cmake/Dependencies.cmake) adds
// this file to exactly the executables it links mimalloc into; without mimalloc, libstdc++'s own
// operator new already throws.
#include <cstdlib>
#include <limits>
#include <new>

namespace {

// libstdc++'s loop: try, let the new handler free something (or throw), try again; no handler: throw.
template <typename Allocate>
void* allocate_or_throw(Allocate allocate) {
  for (;;) {
    if (void* p = allocate()) return p;
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* allocate(std::size_t size) {
  // A distinct non-null pointer for every zero-size request, as the standard asks.
  return allocate_or_throw([size] { return std::malloc(size == 0 ? 1 : size); });
}

void* allocate_aligned(std::size_t size, std::align_val_t alignment) {
  const auto align = static_cast<std::size_t>(alignment);
  // aligned_alloc wants a size that is a multiple of the alignment (a power of two): round up, and
  // refuse the sizes that would wrap around doing so.
  if (size > std::numeric_limits<std::size_t>::max() - align) throw std::bad_alloc();
  const std::size_t rounded = size == 0 ? align : (size + align - 1) & ~(align - 1);
  return allocate_or_throw([align, rounded] { return std::aligned_alloc(align, rounded); });
}

}  // namespace

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return allocate_aligned(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return allocate_aligned(size, alignment);
}
