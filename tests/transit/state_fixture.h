// The fixture of the state tests: a transitd over real HTTP on 127.0.0.1 with
// the root's client, and helpers that create resources, principals, grants
// and an initialized process, and that expect an acceptance or a refusal.
#pragma once

#include "node_fixture.h"

namespace cowboy::transit {

inline EntryKey key(const std::string& s) { return EntryKey{{s.begin(), s.end()}}; }
inline EntryValue value(const std::string& s) { return EntryValue{{s.begin(), s.end()}}; }
/// prefix + n (GCC 12 warns, wrongly, about operator+ on these).
inline std::string numbered(std::string prefix, int n) {
  prefix.append(std::to_string(n));
  return prefix;
}
inline std::string text(const EntryValue& v) { return std::string(v.value.begin(), v.value.end()); }
inline Slots<EntryKey, 8> slots(std::vector<std::string> keys) {
  Slots<EntryKey, 8> out;
  for (std::size_t i = 0; i < keys.size(); ++i) out.items[i] = key(keys[i]);
  return out;
}

inline constexpr Id kPid = 7;

class StateTest : public NodeTest {
 protected:
  /// The realm the node starts with.
  virtual Genesis genesis() const { return testing::sample_genesis(); }
  void SetUp() override {
    NodeTest::SetUp();
    start(genesis());
    admin_ = std::make_unique<Client>(root());
  }
  void TearDown() override {
    admin_.reset();
    NodeTest::TearDown();
  }

  template <typename O> O ok(ClientResult<Receipt> r) {
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    if (!r.ok()) return O{};
    return std::get<O>(r->outcome);
  }
  Receipt accept(Client& c, Command op, std::vector<Client::Bytes> blocks = {}) {
    auto r = c.submit(std::move(op), std::move(blocks));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Receipt{};
  }
  Rejection refused(ClientResult<Receipt> r) {
    EXPECT_FALSE(r.ok());
    if (r.ok() || !r.error().rejection) return Rejection{};
    return *r.error().rejection;
  }
  template <typename T> T answer(Client& c, QueryOp op) {
    auto r = c.query(std::move(op));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::get<T>(r->result) : T{};
  }
  Rejection query_refused(Client& c, QueryOp op) {
    auto r = c.query(std::move(op));
    EXPECT_FALSE(r.ok());
    if (r.ok() || !r.error().rejection) return Rejection{};
    return *r.error().rejection;
  }

  Id resource(const std::string& name, std::optional<Id> owner = std::nullopt) {
    return ok<ResourceCreated>(admin_->submit(CreateResource{{name}, owner})).resource;
  }
  /// A principal with one grant; returns its private role for more grants.
  Id principal(Id id, std::uint8_t seed, Scope scope, std::uint64_t bits, std::optional<Id> pid_scope = std::nullopt) {
    return ok<PrincipalCreated>(admin_->submit(CreatePrincipal{id, testing::key_of(testing::seed_of(seed)), scope,
                                                               Permissions{bits}, pid_scope, std::nullopt}))
        .role;
  }
  Id grant(Id role, Scope scope, std::uint64_t bits) {
    return ok<Granted>(admin_->submit(Grant{role, scope, Permissions{bits}, std::nullopt})).grant;
  }
  /// Process kPid requiring "doc", associated with `doc`, initialized (generation 1).
  void process(Id doc, Id pid = kPid) {
    accept(*admin_, CreateProcess{pid, {{{"doc"}}}});
    accept(*admin_, Associate{pid, {"doc"}, doc});
    EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Initialize{pid, 0})).generation, 1u);
  }
  /// Writes `count` entries k00..k(count-1) as root, owning and leaving the process owned.
  Id fill(Id doc, int count) {
    const Id generation = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
    for (int i = 0; i < count; i += 4) {
      Turn t{kPid, generation, std::nullopt, doc, std::nullopt, {}, {}, {}, {}, std::nullopt};
      for (int j = i; j < std::min(count, i + 4); ++j) {
        std::string name = j < 10 ? "k0" : "k";
        name.append(std::to_string(j));
        std::string v = "v";
        v.append(name);
        t.mutations.items.push_back({key(name), value(v)});
      }
      accept(*admin_, t);
    }
    return generation;
  }
  ProcessInfo process_info(Client& c, Id pid = kPid) { return answer<ProcessInfo>(c, ProcessRead{pid}); }
  Id revision_of(Id doc) { return answer<ResourceAccess>(*admin_, ReadAccess{doc}).resource.revision; }

  std::unique_ptr<Client> admin_;
};

}  // namespace cowboy::transit
