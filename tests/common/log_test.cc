#include "common/log.h"

#include <gtest/gtest.h>

namespace cowboy::log {

TEST(Logfmt, FieldsQuoteOnlyWhenNeededAndEscape) {
  EXPECT_EQ(field("stream", "ab12"), "stream=ab12");
  EXPECT_EQ(field("n", std::uint64_t{42}), "n=42");
  EXPECT_EQ(field("why", "disk full"), "why=\"disk full\"");
  EXPECT_EQ(field("q", "a\"b"), "q=\"a\\\"b\"");
  EXPECT_EQ(field("empty", ""), "empty=\"\"");
  EXPECT_EQ(line("session_opened", field("conn", std::uint64_t{3}), field("height", std::uint64_t{9})),
            "event=session_opened conn=3 height=9");
}

}  // namespace cowboy::log
