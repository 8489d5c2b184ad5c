// What the maintenance process (`transitd --maintain`) needs beyond courier
// delivery: the two commands that record terminal dispositions and the two
// bounded listings that find its work (docs/transit.md, decisions 50-56).
// Same conventions as types.h: one field list per type, declaration order is
// wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

/// How a process ended without a command: its suspension's resume deadline
/// passed (trusted time), or a required dependency's lifetime ended.
enum class Ending : std::uint8_t { kSuspensionExpired, kDependencyEnded };
template <> struct EnumTraits<Ending> {
  static constexpr std::array<std::string_view, 2> kNames = {"suspension_expired", "dependency_ended"};
};

// ---- commands ----------------------------------------------------------------

/// The terminal disposition of a pending output whose source is terminated:
/// it is cancelled, never delivered, and its route released (decision 51).
struct CancelOutput {
  static constexpr std::string_view kName = "cancel_output";
  Id output = 0;
  bool operator==(const CancelOutput&) const = default;
};
template <typename V> void fields(V& v, CancelOutput& t) { v("output", t.output); }

/// Records the retirement of a process that has already ended - by an
/// expired suspension or a required dependency's end - with its unconsumed
/// inputs counted cancelled (decision 52).
struct RecordRetirement {
  static constexpr std::string_view kName = "record_retirement";
  Pid pid{};
  bool operator==(const RecordRetirement&) const = default;
};
template <typename V> void fields(V& v, RecordRetirement& t) { v("pid", t.pid); }

// ---- receipts ------------------------------------------------------------------

struct OutputCancelled {
  static constexpr std::string_view kName = "output_cancelled";
  Id output = 0;
  Pid source{};
  Pid destination{};
  bool operator==(const OutputCancelled&) const = default;
};
template <typename V> void fields(V& v, OutputCancelled& t) {
  v("output", t.output)("source", t.source)("destination", t.destination);
}

struct RetirementRecorded {
  static constexpr std::string_view kName = "retirement_recorded";
  Pid pid{};
  Ending ending = Ending::kSuspensionExpired;
  Id cancelled = 0;  // the process's cancelled inputs, now counting every unconsumed one
  bool operator==(const RetirementRecorded&) const = default;
};
template <typename V> void fields(V& v, RetirementRecorded& t) {
  v("pid", t.pid)("ending", t.ending)("cancelled", t.cancelled);
}

// ---- queries ---------------------------------------------------------------------

/// The head (oldest unresolved output) of every route with pending outputs,
/// oldest head first; `cursor.after` is a head's output id (decision 53).
struct ListRoutes {
  static constexpr std::string_view kName = "list_routes";
  std::optional<Cursor> cursor;
  bool operator==(const ListRoutes&) const = default;
};
template <typename V> void fields(V& v, ListRoutes& t) { v("cursor", t.cursor); }

/// The processes that have ended but whose retirement is not recorded yet,
/// in PID order (decision 54).
struct ListEnded {
  static constexpr std::string_view kName = "list_ended";
  std::optional<Cursor> cursor;
  bool operator==(const ListEnded&) const = default;
};
template <typename V> void fields(V& v, ListEnded& t) { v("cursor", t.cursor); }

// ---- query results -------------------------------------------------------------------

/// A route's head, with what decides its resolution judged now: whether its
/// source is terminated (cancel it) and its destination's state (a retired
/// destination disposes of it; an uninitialized or fenced one makes it wait).
struct RouteHead {
  static constexpr std::string_view kName = "RouteHead";
  Id output = 0;
  Pid source{};
  Pid destination{};
  Id pending = 0;            // unresolved outputs on the route, this one included
  Position published_at{};       // the position of the turn that published it
  TrustedMs published_at_ms{};    // ... and its trusted time
  bool source_terminated = false;
  ProcessState destination_state = ProcessState::kUninitialized;
  bool operator==(const RouteHead&) const = default;
};
template <typename V> void fields(V& v, RouteHead& t) {
  v("output", t.output)("source", t.source)("destination", t.destination)("pending", t.pending)(
      "published_at", t.published_at)("published_at_ms", t.published_at_ms)("source_terminated", t.source_terminated)(
      "destination_state", t.destination_state);
}

struct RoutePage {
  static constexpr std::string_view kName = "route_page";
  Position cut{};
  List<RouteHead, kPageRecords> items;
  std::optional<Cursor> cursor;  // null: the listing is complete
  bool operator==(const RoutePage&) const = default;
};
template <typename V> void fields(V& v, RoutePage& t) { v("cut", t.cut)("items", t.items)("cursor", t.cursor); }

struct EndedProcess {
  static constexpr std::string_view kName = "EndedProcess";
  Pid pid{};
  Ending ending = Ending::kSuspensionExpired;
  Id unconsumed = 0;  // admitted inputs its retirement will count cancelled
  bool operator==(const EndedProcess&) const = default;
};
template <typename V> void fields(V& v, EndedProcess& t) { v("pid", t.pid)("ending", t.ending)("unconsumed", t.unconsumed); }

struct EndedPage {
  static constexpr std::string_view kName = "ended_page";
  Position cut{};
  List<EndedProcess, kPageRecords> items;
  std::optional<Cursor> cursor;
  bool operator==(const EndedPage&) const = default;
};
template <typename V> void fields(V& v, EndedPage& t) { v("cut", t.cut)("items", t.items)("cursor", t.cursor); }

}  // namespace cowboy::transit
