// docs/transit-reference.md, generated from the field lists of types.h and
// state.h (the same walk as the schema), the capability and outcome of each
// operation (operations.h) and the rejection catalogue (reasons.h), with a worked
// signing example. The checked-in copy must equal it (tests/transit/schema_test.cc);
// `build/bin/transit reference > docs/transit-reference.md` regenerates it.
#pragma once

#include <string>

#include "common/crypto.h"
#include "transit/contract/types.h"

namespace cowboy::transit {

std::string reference_text();

/// The worked example: one signed command and one signed query by a fixed
/// test key, with this build's definition, as the reference prints them.
struct WorkedExample {
  crypto::Ed25519Seed seed{};
  PublicKey public_key{};
  SignedRequest command;
  std::string command_inner;  // the canonical JSON the command's signature covers
  Digest command_digest{};
  std::string command_body;  // POST /v1/command: the envelope, "\n", the block body
  std::string block;
  SignedQuery query;
  std::string query_inner;
  Digest query_digest{};
  std::string query_body;
};
WorkedExample worked_example();

}  // namespace cowboy::transit
