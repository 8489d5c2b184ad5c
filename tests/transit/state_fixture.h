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

inline constexpr Pid kPid{7};

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

  template <typename O = std::nullopt_t> ResourceId resource(const std::string& name, O owner = std::nullopt) {
    return ok<ResourceCreated>(admin_->submit(CreateResource{{name}, testing::opt_id<Pid>(owner)})).resource;
  }
  /// A principal with one grant; returns its private role for more grants.
  template <typename I, typename S = std::nullopt_t>
  Id principal(I id, std::uint8_t seed, Scope scope, std::uint64_t bits, S pid_scope = std::nullopt) {
    return ok<PrincipalCreated>(admin_->submit(CreatePrincipal{testing::id<PrincipalId>(id), testing::key_of(testing::seed_of(seed)), scope,
                                                               Permissions{bits}, testing::opt_id<Pid>(pid_scope), std::nullopt}))
        .role;
  }
  Id grant(Id role, Scope scope, std::uint64_t bits) {
    return ok<Granted>(admin_->submit(Grant{role, scope, Permissions{bits}, std::nullopt})).grant;
  }
  /// Process kPid requiring "doc", associated with `doc`, initialized (generation 1).
  template <typename P = Pid> void process(ResourceId doc, P pid_of = kPid) {
    const Pid pid = testing::id<Pid>(pid_of);
    accept(*admin_, CreateProcess{pid, {{{"doc"}}}});
    accept(*admin_, Associate{pid, {"doc"}, doc});
    EXPECT_EQ(ok<ProcessChanged>(admin_->submit(Initialize{pid, 0})).generation, 1u);
  }
  /// Writes `count` entries k00..k(count-1) as root, owning and leaving the process owned.
  Id fill(ResourceId doc, int count) {
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
  template <typename P = Pid> ProcessInfo process_info(Client& c, P pid = kPid) {
    return answer<ProcessInfo>(c, ProcessRead{testing::id<Pid>(pid)});
  }
  Revision revision_of(ResourceId doc) { return answer<ResourceAccess>(*admin_, ReadAccess{doc}).resource.revision; }

  std::unique_ptr<Client> admin_;
};

}  // namespace cowboy::transit
