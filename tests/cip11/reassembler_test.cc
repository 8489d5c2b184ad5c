// §12.1 frames out of a stream that arrives in pieces: every split point of
// every sample, byte by byte, refusals from the prefix alone, and the budget.
#include "cip11/reassembler.h"

#include <gtest/gtest.h>

#include <set>

#include "samples.h"

namespace cowboy::cip11 {
namespace {

Bytes stream_of_every_sample() {
  Bytes all;
  for (const auto& s : testing::frame_samples()) {
    Bytes f = encode_frame(s.frame);
    all.insert(all.end(), f.begin(), f.end());
  }
  return all;
}

std::vector<Frame> drain(FrameReassembler& r) {
  std::vector<Frame> out;
  while (auto f = r.next()) out.push_back(std::move(*f));
  return out;
}

TEST(Cip11Reassembler, EverySplitPointYieldsTheSameFramesInOrder) {
  const Bytes all = stream_of_every_sample();
  const auto samples = testing::frame_samples();
  for (std::size_t split = 0; split <= all.size(); ++split) {
    net::ReadBudget budget(kMaxFrameBytes);
    FrameReassembler r(&budget);
    ASSERT_TRUE(r.push(ByteView(all).first(split)).ok()) << split;
    ASSERT_TRUE(r.push(ByteView(all).subspan(split)).ok()) << split;
    auto frames = drain(r);
    ASSERT_EQ(frames.size(), samples.size()) << split;
    for (std::size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frames[i], samples[i].frame) << split << " " << samples[i].name;
    EXPECT_EQ(budget.in_use(), 0u);  // nothing is held between frames
  }
}

TEST(Cip11Reassembler, OneByteAtATime) {
  const Bytes all = stream_of_every_sample();
  FrameReassembler r;
  std::size_t frames = 0;
  for (std::uint8_t b : all) {
    ASSERT_TRUE(r.push(ByteView(&b, 1)).ok());
    while (r.next()) ++frames;
  }
  EXPECT_EQ(frames, testing::frame_samples().size());
  EXPECT_EQ(r.buffered(), 0u);
}

// §12.1: a stream that ends (FIN) inside a frame - its prefix or its body -
// carries a truncated frame; one that ends between frames does not.
TEST(Cip11Reassembler, AStreamEndingInsideAFrameIsTruncatedAndBetweenFramesIsNot) {
  const Bytes all = stream_of_every_sample();
  std::set<std::size_t> boundaries{0};
  for (const auto& s : testing::frame_samples()) boundaries.insert(*boundaries.rbegin() + encode_frame(s.frame).size());
  for (std::size_t split = 0; split <= all.size(); ++split) {
    net::ReadBudget budget(kMaxFrameBytes);
    FrameReassembler r(&budget);
    ASSERT_TRUE(r.push(ByteView(all).first(split)).ok()) << split;
    auto ended = r.end();
    if (boundaries.contains(split)) {
      EXPECT_TRUE(ended.ok()) << split;
    } else {
      ASSERT_FALSE(ended.ok()) << split;
      EXPECT_EQ(ended.error(), Errc::kFrameTruncated) << split;
      EXPECT_EQ(r.push(Bytes{0}).error(), Errc::kFrameTruncated) << split;  // final
    }
    EXPECT_EQ(budget.in_use(), 0u) << split;  // a truncated frame's bytes go back
  }
}

TEST(Cip11Reassembler, ALengthOfZeroOrAboveTheMaximumIsRefusedFromThePrefixAlone) {
  FrameReassembler empty;
  EXPECT_EQ(empty.push(Bytes{0, 0, 0, 0}).error(), Errc::kFrameEmpty);
  FrameReassembler large;
  EXPECT_TRUE(large.push(Bytes{0x00, 0x20, 0x00}).ok());  // three bytes of the prefix: undecided
  EXPECT_EQ(large.push(Bytes{0x01}).error(), Errc::kFrameTooLarge);  // 2 MiB + 1, with no payload sent
  EXPECT_EQ(large.buffered(), 0u);
  EXPECT_EQ(large.push(Bytes{1, 2, 3}).error(), Errc::kFrameTooLarge);  // final for the stream
  FrameReassembler max;
  EXPECT_TRUE(max.push(Bytes{0x00, 0x20, 0x00, 0x00}).ok());  // exactly MAX_FRAME_BYTES is allowed
}

// The channel's bound before admission (4 KiB on the control stream): a
// longer declared length is refused from the prefix, nothing of it kept;
// lengths up to it pass, and a raised bound takes the larger frames again.
TEST(Cip11Reassembler, ATighterBoundRefusesALongerDeclaredLengthFromThePrefix) {
  FrameReassembler tight;
  tight.set_max_frame_bytes(4 * 1024);
  EXPECT_EQ(tight.push(Bytes{0x00, 0x00, 0x10, 0x01, 0x5a}).error(), Errc::kFrameTooLarge);
  EXPECT_EQ(tight.buffered(), 0u);
  FrameReassembler raised;
  raised.set_max_frame_bytes(4 * 1024);
  ASSERT_TRUE(raised.push(encode_frame(testing::heartbeat_ping())).ok());
  EXPECT_TRUE(raised.next());
  raised.set_max_frame_bytes(kMaxFrameBytes);
  Bytes big = encode_frame(JobResult{JobId{testing::filled(0xc0)}, Bytes(8'000, 0x11)});
  ASSERT_TRUE(raised.push(big).ok());
  EXPECT_TRUE(raised.next());
  FrameReassembler capped;
  capped.set_max_frame_bytes(kMaxFrameBytes + 1);  // never above MAX_FRAME_BYTES
  EXPECT_EQ(capped.push(Bytes{0x00, 0x20, 0x00, 0x01}).error(), Errc::kFrameTooLarge);
}

TEST(Cip11Reassembler, AnUnknownTypeIsRefusedAndEarlierFramesStayAvailable) {
  Bytes stream = encode_frame(testing::heartbeat_ping());
  Bytes bad = {0, 0, 0, 2, 0x7f, 0xa0};  // type 0x7f, an empty map
  stream.insert(stream.end(), bad.begin(), bad.end());
  FrameReassembler r;
  EXPECT_EQ(r.push(stream).error(), Errc::kUnknownFrameType);
  auto first = r.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, Frame{testing::heartbeat_ping()});
  EXPECT_FALSE(r.next());
}

TEST(Cip11Reassembler, PartialFramesTakeFromTheSharedBudgetAsBytesArrive) {
  Bytes big = encode_frame(JobResult{JobId{testing::filled(0xc0)}, Bytes(3'000, 0x11)});
  net::ReadBudget budget(2'000);
  FrameReassembler a(&budget), b(&budget);
  ASSERT_TRUE(a.push(ByteView(big).first(1'000)).ok());
  EXPECT_EQ(budget.in_use(), 1'000u - 4);  // the payload bytes that arrived, not the declared length
  EXPECT_EQ(b.push(ByteView(big).first(1'200)).error(), Errc::kReadBudgetExhausted);
  EXPECT_EQ(budget.in_use(), 1'000u - 4);  // b gave back what it held
  EXPECT_EQ(a.push(ByteView(big).subspan(1'000)).error(), Errc::kReadBudgetExhausted);  // the whole frame does not fit
  EXPECT_EQ(budget.in_use(), 0u);
  net::ReadBudget roomy(4'000);
  FrameReassembler c(&roomy);
  ASSERT_TRUE(c.push(big).ok());
  EXPECT_TRUE(c.next());
  EXPECT_EQ(roomy.in_use(), 0u);
}

}  // namespace
}  // namespace cowboy::cip11
