#include "cbqs/client/dialing.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace cowboy::cbqs::client {

namespace {

struct Range4 {
  std::uint32_t base;
  int bits;
  const char* text;
};
constexpr Range4 kRefused4[] = {
    {0x00000000, 8, "0.0.0.0/8"},        {0x0A000000, 8, "10.0.0.0/8"},       {0x64400000, 10, "100.64.0.0/10"},
    {0x7F000000, 8, "127.0.0.0/8"},      {0xA9FE0000, 16, "169.254.0.0/16"},  {0xAC100000, 12, "172.16.0.0/12"},
    {0xC0000000, 24, "192.0.0.0/24"},    {0xC0000200, 24, "192.0.2.0/24"},    {0xC0586300, 24, "192.88.99.0/24"},
    {0xC0A80000, 16, "192.168.0.0/16"},  {0xC6120000, 15, "198.18.0.0/15"},   {0xC6336400, 24, "198.51.100.0/24"},
    {0xCB007100, 24, "203.0.113.0/24"},  {0xE0000000, 4, "224.0.0.0/4"},      {0xF0000000, 4, "240.0.0.0/4"},
};

std::optional<std::string> refused4(std::uint32_t a) {
  for (const auto& r : kRefused4) {
    std::uint32_t mask = r.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - r.bits);
    if ((a & mask) == r.base) return std::string(r.text);
  }
  return std::nullopt;
}

std::uint32_t v4_at(const std::array<std::uint8_t, 16>& a, int at) {
  return std::uint32_t{a[at]} << 24 | std::uint32_t{a[at + 1]} << 16 | std::uint32_t{a[at + 2]} << 8 | a[at + 3];
}

bool prefix(const std::array<std::uint8_t, 16>& a, std::initializer_list<std::uint8_t> p, int bits) {
  int i = 0;
  for (auto byte : p) {
    int take = std::min(8, bits - 8 * i);
    if (take <= 0) break;
    std::uint8_t mask = static_cast<std::uint8_t>(0xFF << (8 - take));
    if ((a[i] & mask) != (byte & mask)) return false;
    ++i;
  }
  return true;
}

std::optional<std::string> refused6(const std::array<std::uint8_t, 16>& a) {
  static constexpr std::array<std::uint8_t, 16> zero{};
  std::array<std::uint8_t, 16> loopback{};
  loopback[15] = 1;
  if (a == zero) return "::/128";
  if (a == loopback) return "::1/128";
  // Forms that embed an IPv4 address are judged by that address.
  if (prefix(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96)) return refused4(v4_at(a, 12));   // ::ffff:0:0/96
  if (prefix(a, {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}, 96)) return refused4(v4_at(a, 12));  // 64:ff9b::/96
  if (prefix(a, {0x20, 0x02}, 16)) return refused4(v4_at(a, 2));                                  // 2002::/16
  if (prefix(a, {0x01, 0x00, 0, 0, 0, 0, 0, 0}, 64)) return "100::/64";
  if (prefix(a, {0x20, 0x01, 0x0d, 0xb8}, 32)) return "2001:db8::/32";
  if (prefix(a, {0xfc}, 7)) return "fc00::/7";
  if (prefix(a, {0xfe, 0x80}, 10)) return "fe80::/10";
  if (prefix(a, {0xff}, 8)) return "ff00::/8";
  return std::nullopt;
}

}  // namespace

std::optional<Endpoint> parse_endpoint(std::string_view uri) {
  if (!uri.starts_with("wss://")) return std::nullopt;
  uri.remove_prefix(6);
  Endpoint e;
  auto slash = uri.find('/');
  std::string_view authority = uri.substr(0, slash);
  if (slash != std::string_view::npos) e.path = std::string(uri.substr(slash));
  std::string_view port_text;
  if (authority.starts_with("[")) {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    e.host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return std::nullopt;
      port_text = rest.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    e.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (e.host.empty()) return std::nullopt;
  if (!port_text.empty()) {
    unsigned port = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9') return std::nullopt;
      port = port * 10 + static_cast<unsigned>(c - '0');
      if (port > 65535) return std::nullopt;
    }
    e.port = static_cast<std::uint16_t>(port);
  }
  return e;
}

std::optional<std::string> refused_range(std::string_view literal) {
  std::string text(literal);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return refused4(ntohl(v4.s_addr));
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    std::array<std::uint8_t, 16> a;
    std::memcpy(a.data(), v6.s6_addr, 16);
    return refused6(a);
  }
  return std::nullopt;
}

Result<std::vector<std::string>, std::string> resolve_checked(const std::string& host, bool allow_private) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
    return Err{"cannot resolve " + host + ": " + gai_strerror(rc)};
  std::vector<std::string> addresses;
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = ai->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr)
                                               : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr);
    if (!inet_ntop(ai->ai_family, raw, text, sizeof text)) continue;
    if (std::find(addresses.begin(), addresses.end(), text) == addresses.end()) addresses.emplace_back(text);
  }
  freeaddrinfo(found);
  if (addresses.empty()) return Err{host + " resolves to no address"};
  if (!allow_private)
    for (const auto& a : addresses)  // every address, not only the first
      if (auto range = refused_range(a)) return Err{host + " resolves to " + a + ", in refused range " + *range};
  return addresses;
}

}  // namespace cowboy::cbqs::client
