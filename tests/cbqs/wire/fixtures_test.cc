// Byte-exact fixtures: tests/fixtures/cbqs/<name>.hex holds the canonical
// encoding of each sample. The files are the contract; a codec change that
// alters a byte fails here. Regenerate deliberately with
//   COWBOY_WRITE_FIXTURES=1 build/bin/cbqs_wire_tests --gtest_filter='Fixtures.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "samples.h"

namespace cowboy::cbqs {
namespace {

std::string fixture_path(const std::string& name) { return std::string(COWBOY_FIXTURE_DIR) + "/cbqs/" + name + ".hex"; }

// A fixture file: hex digits, whitespace ignored, '#' starts a comment line.
std::optional<Bytes> read_fixture(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line, hex;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '#') continue;
    for (char c : line)
      if (!std::isspace(static_cast<unsigned char>(c))) hex.push_back(c);
  }
  return from_hex(hex);
}

void write_fixture(const std::string& path, const testing::Sample& s) {
  std::ofstream out(path);
  out << "# " << s.name << ": " << s.encoded.size() << " bytes, canonical CIP-39 v2 encoding\n";
  std::string hex = to_hex(s.encoded);
  for (std::size_t i = 0; i < hex.size(); i += 64) out << hex.substr(i, 64) << "\n";
}

TEST(Fixtures, EveryObjectAndFrameMatchesItsFileByteForByte) {
  bool write = std::getenv("COWBOY_WRITE_FIXTURES") != nullptr;
  for (const auto& s : testing::all_samples()) {
    std::string path = fixture_path(s.name);
    if (write) write_fixture(path, s);
    auto expected = read_fixture(path);
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
