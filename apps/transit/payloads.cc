// The transit CLI's payload commands (docs/transit.md, decisions 84-92). A
// file is read and written in chunks, never whole; its SHA-256 is computed
// by reading it once before the declaration.
//
//   transit payload declare --pid 7 --file F [--allow-delete]
//   transit payload put --payload N --file F      (then: transit payload ready --payload N)
//   transit payload get --payload N --out F
//   transit payload show|ready|retire|delete-bytes|deleted --payload N
//
// The payload listener's port comes from the dev profile or --payload-port.
#include <fstream>
#include <iostream>

#include "cli.h"
#include "common/bytes.h"
#include "common/crypto.h"
#include "transit/contract/codec.h"

namespace cowboy::transit::cli {

struct PayloadCommands::Options {
  CLI::App *payload, *declare, *put, *ready, *get, *show, *retire, *delete_bytes, *deleted;
  Id pid = 0, id = 0;
  std::string file, out;
  bool allow_delete = false;
  std::uint16_t payload_port = 0;
};

PayloadCommands::PayloadCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  o.payload = app.add_subcommand("payload", "payloads: large immutable bytes of a process");
  o.payload->require_subcommand(1);
  o.payload->add_option("--payload-port", o.payload_port, "the node's payload listener port (default: the dev profile's)");
  o.declare = o.payload->add_subcommand("declare", "declare a file's bytes (length and SHA-256) as a payload of a process");
  o.declare->add_option("--pid", o.pid)->required();
  o.declare->add_option("--file", o.file)->required();
  o.declare->add_flag("--allow-delete", o.allow_delete, "the payload may be deleted once its process retires");
  o.put = o.payload->add_subcommand("put", "upload a declared payload's bytes from a file");
  o.put->add_option("--file", o.file)->required();
  o.get = o.payload->add_subcommand("get", "download a ready payload's bytes into a file");
  o.get->add_option("--out", o.out)->required();
  o.show = o.payload->add_subcommand("show", "a payload's record");
  o.ready = o.payload->add_subcommand("ready", "record that the store holds the uploaded bytes (publisher)");
  o.retire = o.payload->add_subcommand("retire", "retire a deletable payload of a retired process (publisher)");
  o.delete_bytes = o.payload->add_subcommand("delete-bytes", "have the store delete a retired payload's bytes (publisher)");
  o.deleted = o.payload->add_subcommand("deleted", "record the store's confirmed deletion (publisher)");
  for (auto* c : {o.put, o.get, o.show, o.ready, o.retire, o.delete_bytes, o.deleted})
    c->add_option("--payload", o.id)->required();
}

namespace {

void print_payload(const PayloadInfo& p) {
  std::printf("payload %llu of process %llu by principal %llu: %s, %llu bytes, sha256 %s%s\n",
              (unsigned long long)p.payload, (unsigned long long)p.pid.value, (unsigned long long)p.publisher.value,
              std::string(EnumTraits<PayloadState>::kNames[static_cast<int>(p.state)]).c_str(),
              (unsigned long long)p.length, to_hex(ByteView(p.sha256.data(), p.sha256.size())).c_str(),
              p.allow_delete ? ", deletable" : "");
}

}  // namespace

std::optional<int> PayloadCommands::run(const Global& g, Client& base) {
  const auto& o = *o_;
  if (!o.payload->parsed()) return std::nullopt;
  ClientOptions options = base.options();
  if (o.payload_port) options.payload_port = o.payload_port;
  Client client(options);
  auto receipt = [&](Command op) {
    auto r = client.submit(std::move(op));
    if (!r.ok()) return report(g, r.error());
    print_receipt(g, *r);
    return 0;
  };
  auto record = [&](const ClientResult<PayloadInfo>& r, const char* done) {
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    if (done) std::printf("%s\n", done);
    print_payload(*r);
    return 0;
  };

  if (o.declare->parsed()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) return usage("cannot read " + o.file);
    crypto::Sha256 hash;
    std::vector<char> chunk(kPayloadChunkBytes);
    Id length = 0;
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
      const auto n = static_cast<std::size_t>(in.gcount());
      hash.update(ByteView(reinterpret_cast<const std::uint8_t*>(chunk.data()), n));
      length += n;
    }
    return receipt(DeclarePayload{Pid{o.pid}, length, hash.finish(), o.allow_delete});
  }
  if (o.ready->parsed()) return receipt(PayloadReady{o.id});
  if (o.retire->parsed()) return receipt(RetirePayload{o.id});
  if (o.deleted->parsed()) return receipt(PayloadDeleted{o.id});
  if (o.show->parsed()) return record(client.payload(o.id), nullptr);
  if (o.delete_bytes->parsed()) return record(client.delete_payload_bytes(o.id), "bytes deleted");
  if (o.put->parsed()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) return usage("cannot read " + o.file);
    return record(client.put_payload(o.id,
                                     [&](std::span<std::uint8_t> out) {
                                       in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
                                       return static_cast<std::size_t>(in.gcount());
                                     }),
                  "uploaded");
  }
  // get: into a temporary beside --out, moved into place once every byte checked out.
  const std::string partial = o.out + ".partial";
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) return usage("cannot write " + partial);
  auto r = client.get_payload(o.id, [&](std::span<const std::uint8_t> chunk) {
    out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size()));
    return static_cast<bool>(out);
  });
  out.close();
  if (!r.ok()) {
    std::remove(partial.c_str());
    return report(g, r.error());
  }
  if (std::rename(partial.c_str(), o.out.c_str()) != 0) return usage("cannot move " + partial + " to " + o.out);
  return record(r, "downloaded");
}

}  // namespace cowboy::transit::cli
