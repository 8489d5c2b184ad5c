// Payloads over real HTTP against a transitd in this process (docs/transit.md,
// decisions 84-92): declaration, the publisher's upload and payload_ready,
// download, every piece of deletion evidence, each refusal with its reason,
// the payload route's own refusals, and a restart.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include <condition_variable>
#include <thread>

#include "../support/poll.h"
#include "common/crypto.h"
#include "state_fixture.h"

namespace cowboy::transit {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes pattern(std::size_t n, std::uint8_t salt = 0) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((i * 131 + salt) ^ (i >> 9));
  return b;
}
Digest sha256_of(const Bytes& b) { return crypto::sha256(ByteView(b.data(), b.size())); }

Client::PayloadSource from(const Bytes& bytes) {
  auto at = std::make_shared<std::size_t>(0);
  return [&bytes, at](std::span<std::uint8_t> out) {
    const std::size_t n = std::min(out.size(), bytes.size() - *at);
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(*at), n, out.begin());
    *at += n;
    return n;
  };
}

class PayloadTest : public StateTest {
 protected:
  void SetUp() override {
    payload_transfers_.max_connections_per_address = 5;  // every client here is 127.0.0.1: the budget's 4 and one more
    StateTest::SetUp();
    accept(*admin_, CreateProcess{kPid, {}, false});
  }
  Id declare(const Bytes& bytes, bool allow_delete = false, Client* by = nullptr) {
    auto r = (by ? *by : *admin_).submit(DeclarePayload{kPid, bytes.size(), sha256_of(bytes), allow_delete});
    const auto changed = ok<PayloadChanged>(r);
    EXPECT_EQ(changed.state, PayloadState::kDeclared);
    EXPECT_EQ(changed.pid, kPid);
    return changed.payload;
  }
  PayloadInfo upload(Id id, const Bytes& bytes, Client* by = nullptr) {
    auto r = (by ? *by : *admin_).put_payload(id, from(bytes));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : PayloadInfo{};
  }
  Reason transfer_refused(const ClientResult<PayloadInfo>& r) {
    EXPECT_FALSE(r.ok());
    if (r.ok()) return Reason::kSyntax;
    EXPECT_TRUE(r.error().rejection) << r.error().message;
    return r.error().rejection ? r.error().rejection->reason : Reason::kSyntax;
  }
  Bytes download(Id id) {
    Bytes got;
    auto r = admin_->get_payload(id, [&](std::span<const std::uint8_t> chunk) {
      got.insert(got.end(), chunk.begin(), chunk.end());
      return true;
    });
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return got;
  }
  std::filesystem::path payload_dir() const { return dir_ / "payloads"; }
  /// An upload of `id` holds its transfer slot and is under way in the store (it registers after taking the slot).
  bool uploading(Id id, const Bytes& bytes) {
    const auto digest = sha256_of(bytes);
    return !node_->payload_store().absent(id, digest) && !node_->payload_store().holds(id, bytes.size(), digest);
  }
  std::size_t files_in_store() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(payload_dir())) ++n;
    return n;
  }
  /// A raw request to the payload listener, written as given; the status and body of its answer.
  net::HttpAnswer payload_request(const std::string& method, const std::string& target, const std::string& body,
                                  std::vector<std::pair<std::string, std::string>> headers) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(node_->payload_port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    std::string out = method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
    for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    EXPECT_EQ(::send(fd, out.data(), out.size(), MSG_NOSIGNAL), static_cast<ssize_t>(out.size()));
    std::string in;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    net::HttpAnswer a;
    if (in.size() > 12) a.status = std::stoi(in.substr(9, 3));
    if (const auto at = in.find("\r\n\r\n"); at != std::string::npos) a.body = in.substr(at + 4);
    return a;
  }
};

TEST_F(PayloadTest, TheCapabilityIsReportedWithTheRoutesBudget) {
  const auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_NE(std::find(caps->supported.items.begin(), caps->supported.items.end(), CapabilityName{"payloads"}),
            caps->supported.items.end());
  EXPECT_EQ(caps->max_payload_bytes, std::uint64_t{1} << 40);
  EXPECT_EQ(caps->payload_chunk_bytes, 64u * 1024);
}

TEST_F(PayloadTest, DeclaredUploadedReadyAndDownloadedByteForByte) {
  const Bytes bytes = pattern(300 * 1024 + 17);  // several chunks and a partial one
  const Id id = declare(bytes);
  EXPECT_EQ(id, 1u);
  auto info = answer<PayloadInfo>(*admin_, PayloadRead{id});
  EXPECT_EQ(info.state, PayloadState::kDeclared);
  EXPECT_EQ(info.publisher, PrincipalId{1});
  EXPECT_EQ(info.length, bytes.size());
  EXPECT_EQ(info.sha256, sha256_of(bytes));
  EXPECT_FALSE(info.allow_delete);
  EXPECT_EQ(upload(id, bytes).state, PayloadState::kDeclared);  // stored, not yet claimed
  const auto ready = accept(*admin_, PayloadReady{id});
  EXPECT_EQ(std::get<PayloadChanged>(ready.outcome).state, PayloadState::kReady);
  info = answer<PayloadInfo>(*admin_, PayloadRead{id});
  EXPECT_EQ(info.state, PayloadState::kReady);
  EXPECT_EQ(info.ready_at, ready.position);
  EXPECT_EQ(download(id), bytes);
  // An empty payload is a payload too.
  const Id empty = declare({});
  upload(empty, {});
  accept(*admin_, PayloadReady{empty});
  EXPECT_TRUE(download(empty).empty());
}

TEST_F(PayloadTest, AStandalonePayloadIsRefusedSinceEveryProcessLifetimeIsFinite) {
  const Bytes bytes = pattern(10);
  EXPECT_EQ(refused(admin_->submit(DeclarePayload{std::nullopt, 10, sha256_of(bytes), false})).reason,
            Reason::kStandalonePayload);
  EXPECT_EQ(refused(admin_->submit(DeclarePayload{Pid{99}, 10, sha256_of(bytes), false})).reason, Reason::kUnknownProcess);
  // Over 1 TiB is refused before signing; the node refuses it as well.
  auto over = admin_->submit(DeclarePayload{kPid, (std::uint64_t{1} << 40) + 1, sha256_of(bytes), false});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().kind, ClientError::Kind::kInvalid);
  accept(*admin_, Terminate{kPid, 0});
  EXPECT_EQ(refused(admin_->submit(DeclarePayload{kPid, 10, sha256_of(bytes), false})).reason, Reason::kRetired);
}

TEST_F(PayloadTest, OnlyThePublisherUploadsAndRecordsReadyAndOthersNeedExecuteToPublish) {
  principal(2, 2, RealmScope{}, kReadOnly | kExecute);
  principal(3, 3, RealmScope{}, kReadOnly);
  Client other(options(2, 2)), reader(options(3, 3));
  const Bytes bytes = pattern(1000);
  EXPECT_EQ(refused(reader.submit(DeclarePayload{kPid, bytes.size(), sha256_of(bytes), false})).reason,
            Reason::kNotPermitted);
  const Id id = declare(bytes);
  EXPECT_EQ(transfer_refused(other.put_payload(id, from(bytes))), Reason::kNotPublisher);
  upload(id, bytes);
  EXPECT_EQ(refused(other.submit(PayloadReady{id})).reason, Reason::kNotPublisher);
  EXPECT_EQ(refused(other.submit(PayloadReady{99})).reason, Reason::kUnknownPayload);
  accept(*admin_, PayloadReady{id});
  // Another publisher's payload is its own.
  const Id theirs = declare(bytes, false, &other);
  EXPECT_EQ(answer<PayloadInfo>(*admin_, PayloadRead{theirs}).publisher, PrincipalId{2});
  EXPECT_EQ(transfer_refused(admin_->put_payload(theirs, from(bytes))), Reason::kNotPublisher);
  EXPECT_EQ(refused(admin_->submit(PayloadReady{theirs})).reason, Reason::kNotPublisher);
}

TEST_F(PayloadTest, ReadyIsAcceptedOnlyOnceTheStoreHoldsTheDeclaredBytes) {
  const Bytes bytes = pattern(200 * 1024);
  const Id id = declare(bytes);
  EXPECT_EQ(refused(admin_->submit(PayloadReady{id})).reason, Reason::kPayloadBytesMissing);
  // Bytes of the declared length with another digest are not kept.
  EXPECT_EQ(transfer_refused(admin_->put_payload(id, from(pattern(bytes.size(), 1)))), Reason::kPayloadMismatch);
  EXPECT_EQ(refused(admin_->submit(PayloadReady{id})).reason, Reason::kPayloadBytesMissing);
  EXPECT_EQ(files_in_store(), 0u);  // the refused upload left no temporary file
  upload(id, bytes);
  accept(*admin_, PayloadReady{id});
  EXPECT_EQ(refused(admin_->submit(PayloadReady{id})).reason, Reason::kPayloadNotDeclared);
  EXPECT_EQ(transfer_refused(admin_->put_payload(id, from(bytes))), Reason::kPayloadNotDeclared);
  EXPECT_EQ(files_in_store(), 1u);
}

TEST_F(PayloadTest, ThePayloadRouteRefusesWhatItCannotServe) {
  const Bytes bytes = pattern(100);
  const Id id = declare(bytes);
  const std::string header = admin_->signed_query(PayloadRead{id});
  // A Content-Length other than the declared one, without reading a byte of it.
  auto a = payload_request("PUT", payload_target(id), std::string(99, 'x'), {{"X-Transit-Query", header}});
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(rejection_of(a).reason, Reason::kPayloadMismatch);
  // No signed query, or one of another payload.
  a = payload_request("PUT", payload_target(id), std::string(100, 'x'), {});
  EXPECT_EQ(rejection_of(a).reason, Reason::kMissingQueryHeader);
  a = payload_request("PUT", payload_target(id + 1), std::string(100, 'x'), {{"X-Transit-Query", header}});
  EXPECT_EQ(rejection_of(a).reason, Reason::kMissingQueryHeader);
  // POST is no payload method; other paths are no payload route.
  a = payload_request("POST", payload_target(id), "", {{"X-Transit-Query", header}});
  EXPECT_EQ(rejection_of(a).reason, Reason::kMethodNotAllowed);
  a = payload_request("GET", "/v1/payloads/01", "", {{"X-Transit-Query", header}});
  EXPECT_EQ(rejection_of(a).reason, Reason::kUnknownRoute);
  // A forged signature.
  std::string forged = header;
  forged[forged.size() - 3] = forged[forged.size() - 3] == '1' ? '2' : '1';
  a = payload_request("PUT", payload_target(id), std::string(100, 'x'), {{"X-Transit-Query", forged}});
  EXPECT_EQ(a.status, 403);
  // A download of a payload that is not ready.
  auto r = admin_->get_payload(id, [](std::span<const std::uint8_t>) { return true; });
  EXPECT_EQ(transfer_refused(r), Reason::kPayloadNotReady);
  EXPECT_EQ(files_in_store(), 0u);
}

TEST_F(PayloadTest, BytesAndRecordAreReadOnlyWithReadAtThePayloadsProcess) {
  principal(3, 3, RealmScope{}, kInspect);
  Client inspector(options(3, 3));
  const Bytes bytes = pattern(64);
  const Id id = declare(bytes);
  upload(id, bytes);
  accept(*admin_, PayloadReady{id});
  EXPECT_EQ(query_refused(inspector, PayloadRead{id}).reason, Reason::kNotPermitted);
  EXPECT_EQ(transfer_refused(inspector.get_payload(id, [](std::span<const std::uint8_t>) { return true; })),
            Reason::kNotPermitted);
}

TEST_F(PayloadTest, DeletionNeedsAllowDeleteARetiredProcessRetirementAndConfirmedDeletion) {
  const Bytes bytes = pattern(5000);
  const Id kept = declare(bytes, false);
  const Id id = declare(bytes, true);
  for (Id p : {kept, id}) {
    upload(p, bytes);
    accept(*admin_, PayloadReady{p});
  }
  // The process is live: nothing of it is retired yet.
  EXPECT_EQ(refused(admin_->submit(RetirePayload{id})).reason, Reason::kProcessNotRetired);
  EXPECT_EQ(refused(admin_->submit(PayloadDeleted{id})).reason, Reason::kPayloadNotRetired);
  accept(*admin_, Terminate{kPid, 0});
  // Without allow_delete at the declaration, never.
  EXPECT_EQ(refused(admin_->submit(RetirePayload{kept})).reason, Reason::kDeleteNotAllowed);
  EXPECT_EQ(refused(admin_->submit(PayloadDeleted{kept})).reason, Reason::kDeleteNotAllowed);
  EXPECT_EQ(transfer_refused(admin_->delete_payload_bytes(kept)), Reason::kPayloadNotRetired);
  // The bytes of a ready payload stay until it is retired.
  EXPECT_EQ(transfer_refused(admin_->delete_payload_bytes(id)), Reason::kPayloadNotRetired);
  const auto retired = accept(*admin_, RetirePayload{id});
  EXPECT_EQ(std::get<PayloadChanged>(retired.outcome).state, PayloadState::kRetired);
  EXPECT_EQ(refused(admin_->submit(RetirePayload{id})).reason, Reason::kPayloadRetired);
  EXPECT_EQ(transfer_refused(admin_->get_payload(id, [](std::span<const std::uint8_t>) { return true; })),
            Reason::kPayloadNotReady);
  // Deletion evidence is confirmed by the store: refused while it holds the bytes.
  EXPECT_EQ(refused(admin_->submit(PayloadDeleted{id})).reason, Reason::kPayloadBytesPresent);
  principal(2, 2, RealmScope{}, kReadOnly | kExecute);
  Client other(options(2, 2));
  EXPECT_EQ(transfer_refused(other.delete_payload_bytes(id)), Reason::kNotPublisher);
  EXPECT_EQ(refused(other.submit(PayloadDeleted{id})).reason, Reason::kNotPublisher);
  const auto gone = admin_->delete_payload_bytes(id);
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_EQ(files_in_store(), 1u);  // the kept payload's
  const auto deleted = accept(*admin_, PayloadDeleted{id});
  EXPECT_EQ(std::get<PayloadChanged>(deleted.outcome).state, PayloadState::kDeleted);
  const auto info = answer<PayloadInfo>(*admin_, PayloadRead{id});
  EXPECT_EQ(info.state, PayloadState::kDeleted);
  EXPECT_EQ(info.retired_at, retired.position);
  EXPECT_EQ(info.deleted_at, deleted.position);
  EXPECT_EQ(refused(admin_->submit(PayloadDeleted{id})).reason, Reason::kPayloadNotRetired);
  EXPECT_EQ(refused(admin_->submit(RetirePayload{id})).reason, Reason::kPayloadRetired);
  // A declared payload never uploaded can be retired and its (absent) bytes confirmed gone.
  accept(*admin_, CreateProcess{Pid{8}, {}, false});
  const auto never = ok<PayloadChanged>(admin_->submit(DeclarePayload{Pid{8}, 3, sha256_of(pattern(3)), true})).payload;
  accept(*admin_, Terminate{Pid{8}, 0});
  accept(*admin_, RetirePayload{never});
  accept(*admin_, PayloadDeleted{never});
}

// An upload that stops after its header, until released: it holds its
// transfer slot (and its payload's upload) meanwhile.
class StalledUpload {
 public:
  StalledUpload(ClientOptions options, Id id, const Bytes& bytes) {
    thread_ = std::thread([this, options, id, &bytes] {
      Client c(options);
      auto source = from(bytes);
      result_ = c.put_payload(id, [&](std::span<std::uint8_t> out) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return released_; });
        return source(out);
      });
    });
  }
  ~StalledUpload() { finish(); }
  ClientResult<PayloadInfo>& finish() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    return *result_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool released_ = false;
  std::optional<ClientResult<PayloadInfo>> result_;
  std::thread thread_;
};

TEST_F(PayloadTest, OneUploadOfAPayloadAtATimeAndNoMoreTransfersThanTheBudget) {
  const Bytes bytes = pattern(100 * 1024);
  const Id id = declare(bytes);
  {
    StalledUpload first(options(1, 0), id, bytes);
    ASSERT_TRUE(cowboy::testing::eventually([&] { return uploading(id, bytes); }));
    // A second upload of the same payload is refused while the first runs.
    EXPECT_EQ(transfer_refused(admin_->put_payload(id, from(bytes))), Reason::kPayloadBusy);
    const auto done = first.finish();
    EXPECT_TRUE(done.ok()) << (done.ok() ? "" : done.error().message);
  }
  accept(*admin_, PayloadReady{id});
  // Four transfers (the default budget) held: a fifth, a download here, is refused transfers_full.
  std::vector<Id> others;
  for (int i = 0; i < 4; ++i) others.push_back(declare(bytes));
  std::vector<std::unique_ptr<StalledUpload>> held;
  for (Id other : others) held.push_back(std::make_unique<StalledUpload>(options(1, 0), other, bytes));
  for (Id other : others) ASSERT_TRUE(cowboy::testing::eventually([&] { return uploading(other, bytes); }));
  EXPECT_EQ(transfer_refused(admin_->get_payload(id, [](std::span<const std::uint8_t>) { return true; })),
            Reason::kTransfersFull);
  for (auto& h : held) {
    const auto& done = h->finish();
    EXPECT_TRUE(done.ok()) << (done.ok() ? "" : done.error().message);
  }
  EXPECT_EQ(download(id), bytes);  // the budget is free again
}

TEST_F(PayloadTest, RecordsAndBytesSurviveARestartAndIdsAreNotReused) {
  const Bytes bytes = pattern(70 * 1024);
  const Id id = declare(bytes, true);
  upload(id, bytes);
  const auto ready = accept(*admin_, PayloadReady{id});
  const Id pending = declare(pattern(10));
  const auto before = answer<PayloadInfo>(*admin_, PayloadRead{id});
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(answer<PayloadInfo>(*admin_, PayloadRead{id}), before);
  EXPECT_EQ(before.ready_at, ready.position);
  EXPECT_EQ(answer<PayloadInfo>(*admin_, PayloadRead{pending}).state, PayloadState::kDeclared);
  EXPECT_EQ(download(id), bytes);
  EXPECT_EQ(declare(pattern(1)), pending + 1);
}

}  // namespace
}  // namespace cowboy::transit
