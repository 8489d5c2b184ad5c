#include "samples.h"

#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::testing {

Bytes32 filled32(std::uint8_t base) {
  Bytes32 b;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(base + i);
  return b;
}
Address filled20(std::uint8_t base) {
  Address a;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(base + i);
  return a;
}

namespace {
crypto::Ed25519Seed seed(std::uint8_t base) { return filled32(base); }
Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }
}  // namespace

StreamGrantV2 sample_grant() {
  StreamGrantV2 g;
  g.chain_instance_id = filled32(0x10);
  g.stream_id = filled32(0x30);
  g.authorization_generation = 7;
  g.grant_nonce = filled32(0x50);
  g.holder_signing_key = ed25519_public_key(seed(0x70));
  g.verbs = 0x0007;
  g.lane_scope = LaneScopeSet{{LaneId{3}, LaneId{9}, LaneId{27}}};
  g.group_scope = GroupScopeExact{GroupId{4}};
  g.not_before_ms = 1'700'000'000'000;
  g.expires_at_ms = 1'700'003'600'000;
  g.max_message_bytes = 65'536;
  g.max_append_bytes_per_sec = 1'048'576;
  sign_grant(g, seed(0x90));  // Ed25519 is deterministic: the fixture is stable
  return g;
}

CheckpointReceiptV2 sample_checkpoint() {
  CheckpointReceiptV2 c;
  c.chain_instance_id = filled32(0x10);
  c.stream_id = filled32(0x30);
  c.provider = filled20(0xa0);
  c.first_sequence = Sequence{1};
  c.last_sequence = Sequence{64};
  c.records_digest = filled32(0xb0);
  c.previous_checkpoint = Bytes32{};
  c.committed_at_ms = 1'700'000'000'123;
  c.snapshot_height = 4'242;
  sign_checkpoint(c, seed(0xc0));
  return c;
}

GroupConfigV2 sample_group_config() {
  GroupConfigV2 g;
  g.group_id = GroupId{5};
  g.lane_id = LaneId{3};
  g.start = StartAt{Sequence{100}};
  g.visibility_timeout_ms = 30'000;
  g.max_visibility_ms = 120'000;
  g.max_in_flight = 1'000;
  g.max_in_flight_per_holder = 100;
  g.max_attempts = 5;
  g.record_deadline_ms = 3'600'000;
  return g;
}

StreamSettingsV2 sample_settings() {
  return StreamSettingsV2{604'800'000, 1'073'741'824, 1'048'576, 1'048'576, 4'194'304};
}

ProviderRecordV2 sample_provider() {
  ProviderRecordV2 p;
  p.chain_instance_id = filled32(0x10);
  p.provider = filled20(0xa0);
  p.signing_key = ed25519_public_key(seed(0xc0));
  p.signing_key_since = 4'000;
  p.previous_signing_key = ed25519_public_key(seed(0xd0));
  p.previous_signing_key_since = 1'000;
  p.endpoints = {text("wss://cbqs.example/ws"), text("wss://cbqs.example:8443/ws")};
  p.accepts_new = true;
  p.max_streams = 1'000;
  p.assigned_streams = 12;
  p.metadata_hash = filled32(0xe0);
  return p;
}

std::vector<Sample> all_samples() {
  const Bytes32 request_id = filled32(0x01);
  const Bytes32 session_id = filled32(0x21);
  const Bytes32 subscription_id = filled32(0x41);
  const Bytes32 lease = filled32(0x61);
  const auto grant = sample_grant();
  const auto receipt = sample_checkpoint();
  const auto group = sample_group_config();
  const auto settings = sample_settings();

  SessionProofV2 proof;
  proof.chain_instance_id = grant.chain_instance_id;
  proof.stream_id = grant.stream_id;
  proof.grant_id = grant_id(grant);
  proof.session_id = session_id;
  proof.challenge = filled32(0x81);
  sign_proof(proof, seed(0x70));

  StreamRecordV2 stream;
  stream.chain_instance_id = filled32(0x10);
  stream.stream_id = filled32(0x30);
  stream.owner = filled20(0x11);
  stream.owner_nonce = 42;
  stream.admin_key = ed25519_public_key(seed(0x90));
  stream.provider = filled20(0xa0);
  stream.authorization_generation = 7;
  stream.status = StreamStatusV2::kActive;

  CbqsAccountV2 account{filled20(0x11), filled20(0xa0), u128{25'000'000'000}, 3, 1'000, 4'200, false};

  auto request = [&](CbqsRequestBodyV2 body) { return CbqsClientFrameV2{Request{request_id, session_id, body}}; };
  auto response = [&](CbqsResponseBodyV2 body) { return CbqsServerFrameV2{Response{request_id, body}}; };

  std::vector<Sample> s;
  // §4 chain records
  s.push_back(make_sample("provider_record", sample_provider()));
  s.push_back(make_sample("stream_record", stream));
  s.push_back(make_sample("account", account));
  // §5 instructions as SYS_CBQS payloads
  s.push_back(make_sample("ins_register_provider",
                          CbqsInstructionV2{RegisterProviderV2{ed25519_public_key(seed(0xc0)),
                                                               {text("wss://cbqs.example/ws")}, 100, true,
                                                               filled32(0xe0)}}));
  s.push_back(make_sample("ins_update_provider",
                          CbqsInstructionV2{UpdateProviderV2{ed25519_public_key(seed(0xd0)), std::nullopt, 200,
                                                             false, std::nullopt}}));
  s.push_back(make_sample("ins_create_stream",
                          CbqsInstructionV2{CreateStreamV2{42, filled20(0xa0), ed25519_public_key(seed(0x90))}}));
  s.push_back(make_sample("ins_update_stream",
                          CbqsInstructionV2{UpdateStreamV2{filled32(0x30), std::nullopt, true}}));
  s.push_back(make_sample("ins_close_stream", CbqsInstructionV2{CloseStreamV2{filled32(0x30)}}));
  s.push_back(make_sample("ins_top_up",
                          CbqsInstructionV2{TopUpAccountV2{filled20(0x11), filled20(0xa0), 1'000'000'000}}));
  s.push_back(make_sample("ins_settle", CbqsInstructionV2{SettleAccountV2{filled20(0x11), filled20(0xa0)}}));
  s.push_back(make_sample("ins_withdraw_all", CbqsInstructionV2{WithdrawAccountV2{filled20(0xa0), std::nullopt}}));
  s.push_back(make_sample("ins_withdraw_some",
                          CbqsInstructionV2{WithdrawAccountV2{filled20(0xa0), u128{2'000'000'000}}}));
  // §7 authorization
  s.push_back(make_sample("stream_grant", grant));
  s.push_back(make_sample("session_proof", proof));
  // §8-§13 objects
  s.push_back(make_sample("lane_record", LaneRecordV2{filled32(0x30), LaneId{3}, LaneStatusV2::kClosed}));
  s.push_back(make_sample("append_request", AppendRequestV2{LaneId{3}, text("hello")}));
  s.push_back(make_sample("record_header", RecordHeaderV2{filled32(0x30), LaneId{3}}));
  s.push_back(make_sample("group_config", group));
  s.push_back(make_sample("group_ceilings", GroupCeilingsV2{30'000, 16, 262'144}));
  s.push_back(make_sample("stream_settings", settings));
  s.push_back(make_sample("checkpoint_receipt", receipt));
  s.push_back(make_sample("subscription_source_cursor",
                          SubscriptionSourceV2{SourceCursor{LaneScopeAny{}, StartHead{}}}));
  s.push_back(make_sample("subscription_source_group", SubscriptionSourceV2{SourceGroup{LaneId{3}, GroupId{5}}}));
  s.push_back(make_sample("delivery_state_body", DeliveryStateBodyV2{CreditShort{1'152}}));
  // client frames
  s.push_back(make_sample("frame_open_session", CbqsClientFrameV2{OpenSession{request_id, grant}}));
  s.push_back(make_sample("frame_complete_session", CbqsClientFrameV2{CompleteSession{request_id, proof}}));
  s.push_back(make_sample("req_append", request(req::Append{AppendRequestV2{LaneId{3}, text("hello")}})));
  s.push_back(make_sample("req_create_lane", request(req::CreateLane{})));
  s.push_back(make_sample("req_create_room_messages_lane",
                          request(req::CreateLane{RoomLaneV2{RoomMessages{filled32(0x33)}}})));
  s.push_back(make_sample("req_create_room_inbox_lane",
                          request(req::CreateLane{RoomLaneV2{RoomInbox{filled32(0x33), filled32(0x55)}}})));
  s.push_back(make_sample("req_close_lane", request(req::CloseLane{LaneId{3}})));
  s.push_back(make_sample("req_list_lanes", request(req::ListLanes{LaneId{3}, 100})));
  s.push_back(make_sample("req_get_settings", request(req::GetSettings{})));
  s.push_back(make_sample("req_update_settings", request(req::UpdateSettings{settings})));
  s.push_back(make_sample("req_get_checkpoint", request(req::GetCheckpoint{Sequence{17}})));
  auto new_group = group;
  new_group.group_id = GroupId{0};
  s.push_back(make_sample("req_create_group", request(req::CreateGroup{new_group})));
  s.push_back(make_sample("req_update_group", request(req::UpdateGroup{group})));
  s.push_back(make_sample("req_get_group", request(req::GetGroup{GroupId{5}})));
  s.push_back(make_sample("req_delete_group", request(req::DeleteGroup{GroupId{5}})));
  s.push_back(make_sample("req_subscribe_cursor",
                          request(req::Subscribe{SourceCursor{LaneScopeExact{LaneId{3}}, StartAt{Sequence{1}}}, 65'536})));
  s.push_back(make_sample("req_subscribe_group", request(req::Subscribe{SourceGroup{LaneId{3}, GroupId{5}}, 65'536})));
  s.push_back(make_sample("req_add_credit", request(req::AddCredit{subscription_id, 4'096})));
  s.push_back(make_sample("req_unsubscribe", request(req::Unsubscribe{subscription_id})));
  s.push_back(make_sample("req_ack", request(req::Ack{subscription_id, lease})));
  s.push_back(make_sample("req_nack", request(req::Nack{subscription_id, lease})));
  s.push_back(make_sample("req_extend", request(req::Extend{subscription_id, lease, 10'000})));
  s.push_back(make_sample("req_reject", request(req::Reject{subscription_id, lease})));
  s.push_back(make_sample("req_close_session", request(req::CloseSession{})));
  // server frames
  s.push_back(make_sample("frame_session_challenge",
                          CbqsServerFrameV2{SessionChallenge{request_id, session_id, filled32(0x81), 1'700'000'010'000}}));
  s.push_back(make_sample("frame_session_opened", CbqsServerFrameV2{SessionOpened{request_id, session_id, 4'242}}));
  s.push_back(make_sample("resp_appended", response(resp::Appended{Sequence{65}})));
  s.push_back(make_sample("resp_lane_created", response(resp::LaneCreated{LaneId{4}})));
  s.push_back(make_sample("resp_lanes",
                          response(resp::Lanes{{LaneRecordV2{filled32(0x30), LaneId{3}, LaneStatusV2::kActive},
                                                LaneRecordV2{filled32(0x30), LaneId{4}, LaneStatusV2::kClosed}},
                                               LaneId{4}})));
  s.push_back(make_sample("resp_settings", response(resp::Settings{settings, GroupCeilingsV2{30'000, 16, 262'144}})));
  s.push_back(make_sample("resp_checkpoint", response(resp::Checkpoint{receipt})));
  s.push_back(make_sample("resp_group", response(resp::Group{group})));
  s.push_back(make_sample("resp_group_created", response(resp::GroupCreated{GroupId{5}})));
  s.push_back(make_sample("resp_ok", response(resp::Ok{})));
  s.push_back(make_sample("resp_cursor_progress", response(resp::CursorProgress{subscription_id, LaneId{3}, Sequence{99}})));
  s.push_back(make_sample("frame_delivery_leased",
                          CbqsServerFrameV2{Delivery{session_id, subscription_id, lease, RecordHeaderV2{filled32(0x30), LaneId{3}},
                                                     Sequence{65}, text("hello")}}));
  s.push_back(make_sample("frame_delivery_cursor",
                          CbqsServerFrameV2{Delivery{session_id, subscription_id, std::nullopt,
                                                     RecordHeaderV2{filled32(0x30), LaneId{3}}, Sequence{65}, text("hello")}}));
  s.push_back(make_sample("frame_error",
                          CbqsServerFrameV2{ErrorFrame{request_id, 204, text("ChainStateStale"), Bytes{}}}));
  s.push_back(make_sample("frame_delivery_state",
                          CbqsServerFrameV2{DeliveryState{session_id, subscription_id, CreditShort{1'152}}}));
  return s;
}

}  // namespace cowboy::cbqs::testing
