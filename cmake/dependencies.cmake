# Every dependency is a Debian 12 package; see ../shared/design/dependencies.md.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL 3.0 REQUIRED)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
pkg_check_modules(CRYPTOPP REQUIRED IMPORTED_TARGET libcrypto++)
pkg_check_modules(SECP256K1 REQUIRED IMPORTED_TARGET libsecp256k1)
# CIP-11's QUIC transport (src/cip11/quic/ only): ngtcp2 0.12 and its GnuTLS crypto helper.
pkg_check_modules(NGTCP2 REQUIRED IMPORTED_TARGET libngtcp2)
pkg_check_modules(NGTCP2_CRYPTO_GNUTLS REQUIRED IMPORTED_TARGET libngtcp2_crypto_gnutls)
pkg_check_modules(GNUTLS REQUIRED IMPORTED_TARGET gnutls)
if(COWBOY_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
if(COWBOY_BENCH)
  find_package(benchmark CONFIG REQUIRED)
endif()
find_package(RocksDB CONFIG REQUIRED)
find_package(Boost 1.81 CONFIG REQUIRED)

# The servers' allocator: jemalloc (libjemalloc-dev), as Redis on Debian uses.
# Linked into cbqsd and the benchmarks that run a broker, never into the
# libraries (an application using the SDK keeps its own allocator), and not
# under the sanitizers of the fuzz build, which bring their own.
add_library(cowboy_server_allocator INTERFACE)
if(NOT COWBOY_FUZZ)
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
  target_link_libraries(cowboy_server_allocator INTERFACE PkgConfig::JEMALLOC)
endif()
