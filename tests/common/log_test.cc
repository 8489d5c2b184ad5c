#include "common/log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace cowboy::log {
namespace {

constexpr std::string_view kTs = "2026-12-06T06:40:54.123Z";

TEST(LogLines, KvQuotesOnlyWhenNeededAndEscapesSoAValueNeverBreaksItsLine) {
  EXPECT_EQ(render(Format::kKv, kTs, Level::kInfo, "cip11d", "listening",
                   {field("listener", "quic"), field("address", "127.0.0.1:7443"), field("port", std::uint16_t{7443})}),
            "ts=2026-12-06T06:40:54.123Z level=info service=cip11d event=listening listener=quic "
            "address=127.0.0.1:7443 port=7443");
  EXPECT_EQ(render(Format::kKv, kTs, Level::kWarn, "transitd", "e",
                   {field("why", "disk full"), field("q", "a\"b"), field("empty", ""), field("eq", "a=b"),
                    field("nl", "one\ntwo\r\tx"), field("bs", "c:\\d"), field("ctl", std::string("\x01\x7f", 2)),
                    field("utf8", "caf\xc3\xa9"), field("utf8_space", "\xc3\xa9 x")}),
            "ts=2026-12-06T06:40:54.123Z level=warn service=transitd event=e why=\"disk full\" q=\"a\\\"b\" "
            "empty=\"\" eq=\"a=b\" nl=\"one\\ntwo\\r\\tx\" bs=\"c:\\\\d\" ctl=\"\\u0001\\u007f\" utf8=caf\xc3\xa9 "
            "utf8_space=\"\xc3\xa9 x\"");
  EXPECT_EQ(render(Format::kKv, kTs, Level::kError, "cbqsd", "n",
                   {field("neg", -3), field("big", std::uint64_t{18446744073709551615u}), field("yes", true),
                    field("no", false)}),
            "ts=2026-12-06T06:40:54.123Z level=error service=cbqsd event=n neg=-3 big=18446744073709551615 yes=true "
            "no=false");
}

TEST(LogLines, JsonIsOneObjectWithTheSharedFieldsFirstAndTypedValues) {
  EXPECT_EQ(render(Format::kJson, kTs, Level::kInfo, "cip11d", "listening",
                   {field("listener", "quic"), field("port", std::uint16_t{7443}), field("neg", -3), field("ok", true)}),
            R"({"ts":"2026-12-06T06:40:54.123Z","level":"info","service":"cip11d","event":"listening",)"
            R"("listener":"quic","port":7443,"neg":-3,"ok":true})");
  EXPECT_EQ(render(Format::kJson, kTs, Level::kDebug, "transitd", "e",
                   {field("q", "a\"b"), field("empty", ""), field("nl", "one\ntwo\r\tx"), field("bs", "c:\\d"),
                    field("ctl", std::string("\x01\x1f", 2)), field("utf8", "caf\xc3\xa9"), field("bad", "x\xff")}),
            "{\"ts\":\"2026-12-06T06:40:54.123Z\",\"level\":\"debug\",\"service\":\"transitd\",\"event\":\"e\","
            "\"q\":\"a\\\"b\",\"empty\":\"\",\"nl\":\"one\\ntwo\\r\\tx\",\"bs\":\"c:\\\\d\",\"ctl\":\"\\u0001\\u001f\","
            "\"utf8\":\"caf\xc3\xa9\",\"bad\":\"x\xef\xbf\xbd\"}");  // an invalid byte becomes U+FFFD
}

TEST(LogLines, AJsonLineParsesWithTheJsonLibraryToWhatWasLogged) {
  const std::string text = "say \"hi\"\nand \\ caf\xc3\xa9 = \x02";
  const auto line = render(Format::kJson, kTs, Level::kWarn, "cip11-runner", "ready",
                           {field("detail", text), field("height", std::uint64_t{12}), field("push", false)});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto j = nlohmann::json::parse(line);  // throws, failing the test, if it is not JSON
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 7u);
  EXPECT_EQ(j["ts"], std::string(kTs));
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["service"], "cip11-runner");
  EXPECT_EQ(j["event"], "ready");
  EXPECT_EQ(j["detail"], text);
  EXPECT_EQ(j["height"], 12);
  EXPECT_EQ(j["push"], false);
}

TEST(LogLines, TimestampsAreUtcWithMilliseconds) {
  using namespace std::chrono;
  EXPECT_EQ(timestamp(system_clock::time_point(milliseconds(1'796'539'254'123))), "2026-12-06T06:40:54.123Z");
  EXPECT_EQ(timestamp(system_clock::time_point(milliseconds(5))), "1970-01-01T00:00:00.005Z");
}

TEST(LogLines, FormatsAndLevelsByName) {
  EXPECT_EQ(parse_format("kv"), Format::kKv);
  EXPECT_EQ(parse_format("json"), Format::kJson);
  EXPECT_EQ(parse_format("JSON"), std::nullopt);
  EXPECT_EQ(level_name(Level::kWarn), "warn");
  EXPECT_FALSE(set_level("loud"));
  ASSERT_TRUE(set_level("warn"));
  EXPECT_FALSE(enabled(Level::kInfo));
  EXPECT_TRUE(enabled(Level::kError));
  ASSERT_TRUE(set_level("info"));
  EXPECT_TRUE(enabled(Level::kInfo));
}

}  // namespace
}  // namespace cowboy::log
