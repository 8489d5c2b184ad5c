#include "common/keccak_x8.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

// GCC 12's _mm512_undefined_epi32 (inside _mm512_rol_epi64) reads itself on
// purpose to mean "any value"; -Wuninitialized takes that for a bug.
#pragma GCC diagnostic ignored "-Wuninitialized"

#define COWBOY_AVX512 __attribute__((target("avx512f")))
#define COWBOY_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

namespace cowboy::crypto::detail {

namespace {

constexpr std::size_t kRateBytes = 136;  // Keccak-256: 1088-bit rate
constexpr std::size_t kRateWords = kRateBytes / 8;

constexpr std::uint64_t kRoundConstants[24] = {
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000, 0x000000000000808B,
    0x0000000080000001, 0x8000000080008081, 0x8000000000008009, 0x000000000000008A, 0x0000000000000088,
    0x0000000080008009, 0x000000008000000A, 0x000000008000808B, 0x800000000000008B, 0x8000000000008089,
    0x8000000000008003, 0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008};

template <int N>
COWBOY_AVX512_INLINE __m512i rol(__m512i v) {
  if constexpr (N == 0) {
    return v;
  } else {
    return _mm512_rol_epi64(v, N);
  }
}

COWBOY_AVX512_INLINE __m512i xor3(__m512i a, __m512i b, __m512i c) { return _mm512_ternarylogic_epi64(a, b, c, 0x96); }

// chi for one plane: e[x] = b[x] ^ (~b[x+1] & b[x+2]), one ternary-logic op each.
COWBOY_AVX512_INLINE void plane(__m512i* e, __m512i b0, __m512i b1, __m512i b2, __m512i b3, __m512i b4) {
  e[0] = _mm512_ternarylogic_epi64(b0, b1, b2, 0xD2);
  e[1] = _mm512_ternarylogic_epi64(b1, b2, b3, 0xD2);
  e[2] = _mm512_ternarylogic_epi64(b2, b3, b4, 0xD2);
  e[3] = _mm512_ternarylogic_epi64(b3, b4, b0, 0xD2);
  e[4] = _mm512_ternarylogic_epi64(b4, b0, b1, 0xD2);
}

// One round from state a into state e (lane x + 5y at index x + 5 * y).
// rho and pi are folded into the arguments: plane y of the result takes lane
// (x + 3y mod 5, x) of a, rotated by that lane's rho offset.
COWBOY_AVX512_INLINE void round(const __m512i* a, __m512i* e, std::uint64_t round_constant) {
  __m512i c[5], d[5];
#pragma GCC unroll 5
  for (int x = 0; x < 5; ++x) c[x] = xor3(xor3(a[x], a[x + 5], a[x + 10]), a[x + 15], a[x + 20]);
#pragma GCC unroll 5
  for (int x = 0; x < 5; ++x) d[x] = c[(x + 4) % 5] ^ rol<1>(c[(x + 1) % 5]);
  plane(e + 0, rol<0>(a[0] ^ d[0]), rol<44>(a[6] ^ d[1]), rol<43>(a[12] ^ d[2]), rol<21>(a[18] ^ d[3]),
        rol<14>(a[24] ^ d[4]));
  plane(e + 5, rol<28>(a[3] ^ d[3]), rol<20>(a[9] ^ d[4]), rol<3>(a[10] ^ d[0]), rol<45>(a[16] ^ d[1]),
        rol<61>(a[22] ^ d[2]));
  plane(e + 10, rol<1>(a[1] ^ d[1]), rol<6>(a[7] ^ d[2]), rol<25>(a[13] ^ d[3]), rol<8>(a[19] ^ d[4]),
        rol<18>(a[20] ^ d[0]));
  plane(e + 15, rol<27>(a[4] ^ d[4]), rol<36>(a[5] ^ d[0]), rol<10>(a[11] ^ d[1]), rol<15>(a[17] ^ d[2]),
        rol<56>(a[23] ^ d[3]));
  plane(e + 20, rol<62>(a[2] ^ d[2]), rol<55>(a[8] ^ d[3]), rol<39>(a[14] ^ d[4]), rol<41>(a[15] ^ d[0]),
        rol<2>(a[21] ^ d[1]));
  e[0] = e[0] ^ _mm512_set1_epi64(static_cast<long long>(round_constant));
}

// The 8 states, word-interleaved: words[i][k] is lane i of state k.
struct alignas(64) States {
  std::uint64_t words[25][kKeccakLanes];
};

COWBOY_AVX512 void permute(States& s) {
  __m512i a[25], e[25];
  for (int i = 0; i < 25; ++i) a[i] = _mm512_load_si512(s.words[i]);
  for (int r = 0; r < 24; r += 2) {
    round(a, e, kRoundConstants[r]);
    round(e, a, kRoundConstants[r + 1]);
  }
  for (int i = 0; i < 25; ++i) _mm512_store_si512(s.words[i], a[i]);
}

// XORs one rate block of `input` into state k; the last block carries the
// padding (Keccak's original 0x01 ... 0x80, not SHA-3's 0x06).
void absorb_block(States& s, std::size_t k, ByteView input, std::size_t block, std::size_t blocks) {
  std::uint8_t padded[kRateBytes];
  const std::uint8_t* bytes = input.data() + block * kRateBytes;
  if (block + 1 == blocks) {
    std::size_t tail = input.size() - block * kRateBytes;
    std::memset(padded, 0, sizeof padded);
    if (tail > 0) std::memcpy(padded, bytes, tail);
    padded[tail] ^= 0x01;
    padded[kRateBytes - 1] ^= 0x80;
    bytes = padded;
  }
  for (std::size_t i = 0; i < kRateWords; ++i) {
    std::uint64_t w;
    std::memcpy(&w, bytes + 8 * i, 8);  // Keccak lanes are little-endian, as is x86
    s.words[i][k] ^= w;
  }
}

}  // namespace

bool keccak_x8_available() {
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return available;
}

void keccak256_x8(const ByteView* inputs, std::size_t count, Bytes32* out) {
  States s{};
  std::size_t blocks[kKeccakLanes] = {};
  std::size_t passes = 0;
  for (std::size_t k = 0; k < count; ++k) {
    blocks[k] = inputs[k].size() / kRateBytes + 1;  // the padding always fits in the last block
    passes = std::max(passes, blocks[k]);
  }
  for (std::size_t block = 0; block < passes; ++block) {
    for (std::size_t k = 0; k < count; ++k)
      if (block < blocks[k]) absorb_block(s, k, inputs[k], block, blocks[k]);
    permute(s);
    // A state that has absorbed its last block is squeezed now; later passes
    // permute it again, uselessly but harmlessly.
    for (std::size_t k = 0; k < count; ++k) {
      if (block + 1 != blocks[k]) continue;
      for (std::size_t i = 0; i < 4; ++i) std::memcpy(out[k].data() + 8 * i, &s.words[i][k], 8);
    }
  }
}

}  // namespace cowboy::crypto::detail
