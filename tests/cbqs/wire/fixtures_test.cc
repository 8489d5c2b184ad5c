// Byte-exact fixtures: tests/fixtures/cbqs/<name>.hex holds the canonical
// encoding of each sample. The files are the contract; a codec change that
// alters a byte fails here. Regenerate deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cbqs_wire_tests --gtest_filter='Fixtures.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "samples.h"
#include "../../support/hex_fixture.h"

namespace cowboy::cbqs {
namespace {

std::string fixture_path(const std::string& name) { return std::string(COWBOY_FIXTURE_DIR) + "/cbqs/" + name + ".hex"; }

void write_fixture(const std::string& path, const testing::Sample& s) {
  cowboy::testing::write_hex_fixture(path, s.name + ": " + std::to_string(s.encoded.size()) + " bytes, canonical CIP-39 v2 encoding",
                    s.encoded);
}

TEST(Fixtures, EveryObjectAndFrameMatchesItsFileByteForByte) {
  bool write = std::getenv("COWBOY_WRITE_FIXTURES") != nullptr;
  for (const auto& s : testing::all_samples()) {
    std::string path = fixture_path(s.name);
    if (write) write_fixture(path, s);
    auto expected = cowboy::testing::read_hex_fixture(path);
    ASSERT_TRUE(expected) << "missing or unreadable fixture " << path;
    EXPECT_EQ(to_hex(s.encoded), to_hex(*expected)) << s.name;
    EXPECT_TRUE(s.decodes_to_sample(*expected)) << s.name;
  }
}

// A fixture built by hand, not by the encoder: Response { request_id, Ok }.
TEST(Fixtures, HandAssembledOkResponse) {
  Bytes expected{2, 3};
  for (int i = 0; i < 32; ++i) expected.push_back(static_cast<std::uint8_t>(0x01 + i));
  expected.push_back(8);
  EXPECT_EQ(encode(CbqsServerFrameV2{Response{testing::filled32(0x01), resp::Ok{}}}), expected);
}

// A fixture built by hand: Request { Append { lane 3, "hi" } }.
TEST(Fixtures, HandAssembledAppendRequest) {
  Bytes expected{2, 3};
  for (int i = 0; i < 32; ++i) expected.push_back(0x01 + i);  // request_id
  for (int i = 0; i < 32; ++i) expected.push_back(0x21 + i);  // session_id
  Bytes tail{1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 'h', 'i'};
  expected.insert(expected.end(), tail.begin(), tail.end());
  CbqsClientFrameV2 f{Request{testing::filled32(0x01), testing::filled32(0x21), req::Append{{3, Bytes{'h', 'i'}}}}};
  EXPECT_EQ(encode(f), expected);
}

}  // namespace
}  // namespace cowboy::cbqs
