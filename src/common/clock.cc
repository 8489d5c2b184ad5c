#include "common/clock.h"

#include <cstring>

namespace cowboy {

void SystemEntropy::fill(std::span<std::uint8_t> out) {
  constexpr std::size_t kPool = 4096;
  thread_local std::array<std::uint8_t, kPool> pool;
  thread_local std::size_t used = kPool;
  if (out.size() > kPool / 4) return crypto::random_bytes(out);
  if (kPool - used < out.size()) {
    crypto::random_bytes(pool);
    used = 0;
  }
  std::memcpy(out.data(), pool.data() + used, out.size());
  std::memset(pool.data() + used, 0, out.size());  // handed out once
  used += out.size();
}

void SeededEntropy::fill(std::span<std::uint8_t> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    std::array<std::uint8_t, 8> c;
    const std::uint64_t n = counter_++;  // each block its own counter, whichever thread draws it
    for (int i = 0; i < 8; ++i) c[i] = static_cast<std::uint8_t>(n >> (56 - 8 * i));
    Bytes32 block = crypto::keccak256(ByteView(c));
    std::size_t take = std::min(out.size() - done, block.size());
    std::copy_n(block.begin(), take, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += take;
  }
}

}  // namespace cowboy
