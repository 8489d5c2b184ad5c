#include "cip11/quic/arena.h"

#include <jemalloc/jemalloc.h>

#include <string>
#include <sys/types.h>

namespace cowboy::cip11::quic {
namespace {

int create_arena() {
  unsigned arena = 0;
  std::size_t len = sizeof arena;
  if (mallctl("arenas.create", &arena, &len, nullptr, 0) != 0) return 0;  // 0: no arena flag, plain mallocx
  ssize_t immediately = 0;
  for (const char* knob : {"dirty_decay_ms", "muzzy_decay_ms"}) {
    const std::string name = "arena." + std::to_string(arena) + "." + knob;
    mallctl(name.c_str(), nullptr, nullptr, &immediately, sizeof immediately);
  }
  // The thread cache would hand these blocks to other code; bypass it.
  return static_cast<int>(MALLOCX_ARENA(arena)) | MALLOCX_TCACHE_NONE;
}

int flags(void* user) { return *static_cast<const int*>(user); }

void* allocate(std::size_t size, void* user) { return size == 0 ? nullptr : mallocx(size, flags(user)); }

void release(void* ptr, void*) {
  if (ptr) dallocx(ptr, MALLOCX_TCACHE_NONE);
}

void* allocate_zeroed(std::size_t count, std::size_t size, void* user) {
  if (count == 0 || size == 0 || count > SIZE_MAX / size) return nullptr;
  return mallocx(count * size, flags(user) | MALLOCX_ZERO);
}

void* reallocate(void* ptr, std::size_t size, void* user) {
  if (!ptr) return allocate(size, user);
  if (size == 0) return release(ptr, user), nullptr;
  return rallocx(ptr, size, flags(user));
}

}  // namespace

const MemoryHooks& dedicated_arena() {
  static int arena_flags = create_arena();
  static const MemoryHooks hooks{allocate, release, allocate_zeroed, reallocate, &arena_flags};
  return hooks;
}

}  // namespace cowboy::cip11::quic
