// Byte-exact fixtures: tests/fixtures/cbqs/<name>.hex holds the canonical
// encoding of each sample. The files are the contract; a codec change that
// alters a byte fails here. Regenerate deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cbqs_wire_tests --gtest_filter='Fixtures.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "cbqs/wire/ids.h"
#include "samples.h"
#include "../../support/hex_fixture.h"
#include "../../support/refusals_fixture.h"

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

// The typed error each decoder answers to every prefix and single-byte change
// of its sample (tests/fixtures/cbqs/refusals.txt, support/refusals_fixture.h).
TEST(Fixtures, EveryPrefixAndByteChangeIsRefusedWithTheErrorOfItsFile) {
  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/cbqs/refusals.txt";
  if (std::getenv("COWBOY_WRITE_FIXTURES")) {
    std::ofstream out(path);
    for (const auto& s : testing::all_samples()) out << s.name << " " << cowboy::testing::refusals(s.encoded, s.roundtrip) << "\n";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::map<std::string, std::string> expected;
  std::string name, prefixes, changes;
  while (in >> name >> prefixes >> changes) expected[name] = prefixes + " " + changes;
  for (const auto& s : testing::all_samples()) {
    ASSERT_TRUE(expected.contains(s.name)) << s.name;
    EXPECT_EQ(cowboy::testing::refusals(s.encoded, s.roundtrip), expected[s.name]) << s.name;
  }
}

// Known answers for the ids and digests (tests/fixtures/cbqs/ids.txt, one
// "name value" a line): the other-language clients (clients/js) compute the
// same names from the same sample objects and compare with this file.
TEST(Fixtures, IdsAndDigestsMatchTheirVectorFile) {
  auto text = [](std::string_view s) { return Bytes(s.begin(), s.end()); };
  const Bytes32 stream = testing::filled32(0x30);
  const Bytes32 hello = record_digest(RecordHeaderV2{stream, LaneId{3}}, text("hello"));
  const Bytes32 world = record_digest(RecordHeaderV2{stream, LaneId{9}}, text("world"));
  const crypto::Ed25519Seed holder = testing::filled32(0x70);
  std::ostringstream out;
  out << "grant_id " << to_hex(grant_id(testing::sample_grant())) << "\n";
  out << "checkpoint_id " << to_hex(checkpoint_id(testing::sample_checkpoint())) << "\n";
  out << "stream_id " << to_hex(stream_id(testing::filled32(0x10), testing::filled20(0x11), 42)) << "\n";
  out << "record_digest_hello_lane3 " << to_hex(hello) << "\n";
  out << "records_digest_hello_world " << to_hex(records_digest(std::vector<Bytes32>{hello, world})) << "\n";
  out << "records_digest_empty " << to_hex(records_digest(std::vector<Bytes32>{})) << "\n";
  out << "room_lane_messages_0x33 " << room_lane_id(RoomMessages{testing::filled32(0x33)}).value << "\n";
  out << "room_lane_inbox_0x33_0x55 " << room_lane_id(RoomInbox{testing::filled32(0x33), testing::filled32(0x55)}).value << "\n";
  out << "public_key_seed_0x70 " << to_hex(ed25519_public_key(holder).key) << "\n";
  out << "signature_seed_0x70_cbqs " << to_hex(sign_ed25519(holder, text("cbqs")).bytes) << "\n";

  const std::string path = std::string(COWBOY_FIXTURE_DIR) + "/cbqs/ids.txt";
  if (std::getenv("COWBOY_WRITE_FIXTURES")) std::ofstream(path) << out.str();
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(out.str(), expected.str());
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
  CbqsClientFrameV2 f{Request{testing::filled32(0x01), testing::filled32(0x21), req::Append{{LaneId{3}, Bytes{'h', 'i'}}}}};
  EXPECT_EQ(encode(f), expected);
}

}  // namespace
}  // namespace cowboy::cbqs
