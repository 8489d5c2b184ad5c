// A self-signed P-256 certificate for `cbqsd --dev` and tests: CN=localhost,
// SAN DNS:localhost and IP:127.0.0.1. Clients trust it by pinning the file
// (TLS verification stays on); the key file is written with mode 0600.
#pragma once

#include <filesystem>
#include <string>

#include "common/result.h"

namespace cowboy::net {

struct CertFiles {
  std::filesystem::path certificate;  // PEM
  std::filesystem::path private_key;  // PEM, 0600
};

/// Reuses the files in `dir` when both exist; creates them otherwise.
Result<CertFiles, std::string> ensure_dev_certificate(const std::filesystem::path& dir);

}  // namespace cowboy::net
