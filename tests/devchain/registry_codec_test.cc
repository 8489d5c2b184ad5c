// The stored CIP-39 registry (the `registry` key, state_codec.h): pinned byte
// for byte, and refused when truncated or of another version. Regenerate the
// fixture deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/devchain_tests --gtest_filter='DevchainRegistry.*'
#include <gtest/gtest.h>

#include <cstdlib>

#include "../support/hex_fixture.h"
#include "devchain/state_codec.h"
#include "scenario.h"

namespace cowboy::devchain {
namespace {

TEST(DevchainRegistry, TheStoredGenesisRegistryIsPinned) {
  const auto registry = *cbqs::make_genesis(to_registry_genesis(testing::genesis_for(testing::secret(1))));
  const Bytes encoded = encode_registry(registry);
  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/devchain/registry_genesis.hex";
  if (std::getenv("COWBOY_WRITE_FIXTURES"))
    cowboy::testing::write_hex_fixture(path, "a genesis registry as the devchain stores it (version 3)", encoded);
  auto expected = cowboy::testing::read_hex_fixture(path);
  ASSERT_TRUE(expected) << "missing fixture " << path;
  EXPECT_EQ(to_hex(encoded), to_hex(*expected));
  auto decoded = decode_registry(*expected);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, registry);
  Bytes other_version = *expected;
  other_version[0] = 2;
  EXPECT_EQ(decode_registry(other_version).error(), codec::DecodeError::kBadVersion);
  EXPECT_FALSE(decode_registry(ByteView(*expected).first(expected->size() - 1)).ok());
}

}  // namespace
}  // namespace cowboy::devchain
