#include "common/clock.h"

namespace cowboy {

void SeededEntropy::fill(std::span<std::uint8_t> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    std::array<std::uint8_t, 8> c;
    for (int i = 0; i < 8; ++i) c[i] = static_cast<std::uint8_t>(counter_ >> (56 - 8 * i));
    ++counter_;
    Bytes32 block = crypto::keccak256(ByteView(c));
    std::size_t n = std::min(out.size() - done, block.size());
    std::copy_n(block.begin(), n, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += n;
  }
}

}  // namespace cowboy
