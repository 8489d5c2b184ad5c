// Threshold RSA decoders (common/threshold_rsa.h): what a node does with a
// genesis' public key, its own key file's share, and the signature shares and
// signatures other validators send. Input: a selector byte, then the bytes:
//   0 public key; 1 secret share, 2 one to four signature shares back to back,
//   3 signature, each against the fixed 1024-bit 3-of-4 key below (dealt once
//   for this target).
// Nothing may crash; whatever decodes encodes to the same bytes. A decoded key
// hashes the message to its group and checks a signature (its v) with it; the
// decoded signature shares go through combine (which verifies each: too few,
// repeated, out of range), and a combined signature must verify; a share that
// verifies alone is also combined with itself under its own index (repeated),
// index 0 (out of range) and another index (its proof fails). A decoded
// signature goes through verify. Bounded: at most four shares per input.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/threshold_rsa.h"

namespace {

namespace tr = cowboy::crypto::threshold_rsa;

constexpr std::string_view kKeyHex =
    "0100800304b005a4851dfd927c98c4d660276a8b875f6ccc15b953aa7bea774f717cdcd1bff457a590ff8128f408f751bd3e"
    "b562b4b59fcb20bc5e50c4ab4296db9284a16bb27badaf1ea43ecf5bcd97f0d0e6c4e75fd15f3571caef76d0156eb4851942"
    "17032a8fbba4978eb678c8efabcdbde4b8c94b86c504c1f41a021a7f941556c46d8c0520a9d2caa0362e3ea10bc28837128b"
    "7b33fd9085f0c8c4282b1b3933a0fb25ba130940788a295bc6c44ab7d2d8f1b8aeb02110e385b8c728ac59a1790f824f5768"
    "c34b0d97b65d02e28d4c991632d206cd893ac8991839a781e6cd5e4ca22ef7016846301863fbf7328c996d45d7ca5622d454"
    "b3892e347f8bc2cd2edd4014658501befc628cff89aba967d71de458b0ef2a5c5d1cc40bb3e894442ab5cd44e29e0f697130"
    "ee86fffadd5d6271b43ab0c06c6d159a506adab39ed9b14ec33dd090ca944c18bc8159e8edcf3d6b5152fcf4fcc1d89cace4"
    "96a768081927fe545c55154890ca0fcf8a75858c8c36180f5384b5ffff2c8e29a9aceb72909c107a3d4cc4efc3698d02986d"
    "64f0908fe81edddfeef8503ca45187c1438d8334acd9b81183e0b4a94aef9cea7f9fefbbf8a66680089f4bb4427cc53a8685"
    "dafbf3720df127970dd7788f869abe524d887e8402b6dcd83162847ad8bcccf970ea1564b036366cea243101e56137da634d"
    "842956d6634eccf96b2bb709be1227bb00281760cb21d449dea1b6caaf0f9cf72ae78f85af75b2dfe10627e2c9b41bdfcb39"
    "27f80de8e80d5a18ebaba8d325084c54f7752345f3a4a9f7a3e92072a848750d57f7e37b9f2a9ab893574f32a8580cff988b"
    "3860410c96da8d76b5de7b234cbfeefbf85d71ad4dc7a6deac9ba29f471ca7f4ee4f625e3f8fe3a715f6dec86a49c43a25c5"
    "4098193595cf4135593001a34f017db6d4184a82c153118a5dd8efc30e7411300f6693817dcaf4df3ef2c6d9068250ab01e5"
    "821787df8ed5533632543a8eb2d599284d9ae2677c8551975438d8b45e0c5ac3bf441fb568fe8f0fe461a85225351fb4c034"
    "d7b3d2cdbcb7029087821fd83dadb10f1576e9ae6fed82";

const tr::PublicKey& fixed_key() {
  static const tr::PublicKey key = [] {
    auto bytes = cowboy::from_hex(kKeyHex);
    if (!bytes) std::abort();
    auto decoded = tr::decode_public_key(*bytes);
    if (!decoded) std::abort();
    return *decoded;
  }();
  return key;
}

void same(const cowboy::Bytes& encoded, cowboy::ByteView input) {
  if (!std::equal(encoded.begin(), encoded.end(), input.begin(), input.end())) std::abort();
}

constexpr std::size_t kMaxShares = 4;

void expect(bool holds) {
  if (!holds) std::abort();
}

// The combine error `shares` must give: `error`, naming `index`.
void expect_refused(const tr::PublicKey& key, cowboy::ByteView message, const std::vector<tr::SignatureShare>& shares,
                    tr::Error error, std::uint8_t index) {
  auto y = tr::combine(key, message, shares);
  expect(!y && y.error().error == error && y.error().index == index);
}

void combine_shares(const tr::PublicKey& key, cowboy::ByteView message, cowboy::ByteView input) {
  const std::size_t share_size = 1 + 2 * key.element_size() + tr::kChallengeSize + tr::kResponseExtra;
  if (input.empty() || input.size() % share_size != 0 || input.size() / share_size > kMaxShares) return;
  std::vector<tr::SignatureShare> shares;
  for (std::size_t at = 0; at < input.size(); at += share_size) {
    const cowboy::ByteView bytes = input.subspan(at, share_size);
    auto decoded = tr::decode_signature_share(key, bytes);
    if (!decoded) return;
    same(tr::encode_signature_share(*decoded), bytes);
    shares.push_back(*decoded);
  }
  auto y = tr::combine(key, message, shares);
  if (y) {
    expect(shares.size() >= key.threshold && tr::verify(key, message, *y).ok());
    return;
  }
  // One share and too few: it verified. Paired with itself under three indices.
  if (shares.size() != 1 || y.error().error != tr::Error::kNotEnoughShares) return;
  const tr::SignatureShare& share = shares[0];
  tr::SignatureShare other = share;
  expect_refused(key, message, {share, other}, tr::Error::kDuplicateShare, share.index);
  other.index = 0;
  expect_refused(key, message, {share, other}, tr::Error::kIndexOutOfRange, 0);
  other.index = static_cast<std::uint8_t>(share.index % key.shares + 1);
  expect_refused(key, message, {share, other}, tr::Error::kShareProofMismatch, other.index);
}

// A decoded key: the message to its group, and its v as a signature.
void use_key(const tr::PublicKey& key, cowboy::ByteView message) {
  auto x = tr::hash_to_group(key, message);
  expect(x.ok() ? x->size() == key.element_size() : x.error() == tr::Error::kMessageNotUnit);
  auto signature = tr::decode_signature(key, key.v);
  expect(signature.ok());
  (void)tr::verify(key, message, *signature);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  if (size < 1) return 0;
  const ByteView input(data + 1, size - 1);
  const ByteView message = as_bytes("fuzz");
  const tr::PublicKey& key = fixed_key();
  switch (data[0] % 4) {
    case 0:
      if (auto decoded = tr::decode_public_key(input)) {
        same(tr::encode_public_key(*decoded), input);
        use_key(*decoded, message);
      }
      break;
    case 1:
      if (auto decoded = tr::decode_secret_share(key, input)) same(tr::encode_secret_share(*decoded), input);
      break;
    case 2:
      combine_shares(key, message, input);
      break;
    case 3:
      if (auto decoded = tr::decode_signature(key, input)) {
        same(tr::encode_signature(*decoded), input);
        (void)tr::verify(key, message, *decoded);
      }
      break;
  }
  return 0;
}
