// §6.3 heartbeat nonces and the §7.4 local presence with its §6.4 hold.
#include "cip11/liveness.h"

#include <gtest/gtest.h>

namespace cowboy::cip11 {
namespace {

Address runner(std::uint8_t b) {
  Address a{};
  a[0] = b;
  return a;
}

TEST(Cip11Liveness, NoncesStartAtZeroIncreaseAndThePongMustEchoTheLastPing) {
  HeartbeatNonces runner_side, validator_side;
  EXPECT_FALSE(runner_side.pong_matches(0));  // no Ping outstanding yet
  EXPECT_EQ(runner_side.next_ping(), 0u);
  EXPECT_TRUE(runner_side.pong_matches(0));
  EXPECT_EQ(runner_side.next_ping(), 1u);
  EXPECT_FALSE(runner_side.pong_matches(0));  // a stale echo
  EXPECT_TRUE(runner_side.pong_matches(1));
  EXPECT_TRUE(validator_side.accept_ping(0));
  EXPECT_TRUE(validator_side.accept_ping(5));  // gaps are fine
  EXPECT_FALSE(validator_side.accept_ping(5));  // a replay
  EXPECT_FALSE(validator_side.accept_ping(4));
  HeartbeatNonces next_connection;
  EXPECT_TRUE(next_connection.accept_ping(0));  // per connection: a reconnect starts again
}

TEST(Cip11Liveness, APingMakesARunnerPresentUntilFifteenBlocksOfSilence) {
  LocalPresence p;
  p.on_ping(runner(2), Height{100});
  p.on_ping(runner(1), Height{103});
  EXPECT_EQ(p.present_runners(), (std::vector<Address>{runner(1), runner(2)}));
  EXPECT_TRUE(p.expire(Height{114}).empty());  // 14 blocks after 100
  EXPECT_EQ(p.expire(Height{115}), std::vector<Address>{runner(2)});
  EXPECT_FALSE(p.present(runner(2)));
  EXPECT_TRUE(p.present(runner(1)));
  p.on_ping(runner(1), Height{101});  // an older height never moves it back
  EXPECT_TRUE(p.expire(Height{117}).empty());
  EXPECT_EQ(p.expire(Height{118}), std::vector<Address>{runner(1)});
}

TEST(Cip11Liveness, BackpressureHoldsARunnerOutUntilItReassertsOrReconnects) {
  LocalPresence p;
  p.on_ping(runner(1), Height{10});
  p.on_backpressure(runner(1), false);
  EXPECT_FALSE(p.present(runner(1)));
  EXPECT_FALSE(p.accepting_new(runner(1)));  // its Pongs say so
  p.on_ping(runner(1), Height{11});
  EXPECT_FALSE(p.present(runner(1)));  // pings do not restore it while held
  p.on_backpressure(runner(1), true);
  EXPECT_TRUE(p.accepting_new(runner(1)));
  EXPECT_FALSE(p.present(runner(1)));  // ... until the next valid Ping
  p.on_ping(runner(1), Height{12});
  EXPECT_TRUE(p.present(runner(1)));
  p.on_backpressure(runner(1), false);
  p.on_admitted(runner(1));  // a fresh handshake lifts the hold too
  p.on_ping(runner(1), Height{13});
  EXPECT_TRUE(p.present(runner(1)));
}

TEST(Cip11Liveness, ALostConnectionOrAHardFailureDropsUntilTheNextPing) {
  LocalPresence p;
  p.on_ping(runner(1), Height{10});
  p.drop(runner(1));
  EXPECT_FALSE(p.present(runner(1)));
  EXPECT_TRUE(p.accepting_new(runner(1)));  // not a backpressure hold
  p.on_ping(runner(1), Height{11});
  EXPECT_TRUE(p.present(runner(1)));
}

}  // namespace
}  // namespace cowboy::cip11
