// Segmented results (docs/transit.md, decisions 150-154): a resource's whole
// entry set at one basis - a logical result of any size - read as explicit,
// numbered segments of at most a page of records each, every segment
// carrying a digest chain over every record so far, and the last one the
// complete-result evidence: how many segments and records, and the chain's
// final digest. Same conventions as types.h: one field list per type,
// declaration order is wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

/// Where the next segment starts, and what came before it. `index` is the
/// segment asked for (1, 2, ...; a first segment has no cursor), `after` the
/// last key the previous segment examined, `records` how many records
/// segments 0..index-1 held and `chain` the digest after them.
struct SegmentCursor {
  static constexpr std::string_view kName = "SegmentCursor";
  Position cut{};
  Id index = 0;
  Hex<32> after;
  Id records = 0;
  Digest chain{};
  bool operator==(const SegmentCursor&) const = default;
};
template <typename V> void fields(V& v, SegmentCursor& t) {
  v("cut", t.cut)("index", t.index)("after", t.after)("records", t.records)("chain", t.chain);
}

/// One segment of the entries of `basis` (an entry read's one basis,
/// decision 24): the first (no cursor) at the current position, or the one a
/// previous segment's `next` names.
struct ReadSegment {
  static constexpr std::string_view kName = "read_segment";
  Basis basis;
  std::optional<SegmentCursor> cursor;
  bool operator==(const ReadSegment&) const = default;
};
template <typename V> void fields(V& v, ReadSegment& t) { v("basis", t.basis)("cursor", t.cursor); }

/// Complete-result evidence: the result had `records` records in `segments`
/// segments, and `digest` is the chain over all of them, in key order, from
/// the result's origin (segment_origin).
struct Completion {
  static constexpr std::string_view kName = "Completion";
  Id segments = 0;
  Id records = 0;
  Digest digest{};
  bool operator==(const Completion&) const = default;
};
template <typename V> void fields(V& v, Completion& t) {
  v("segments", t.segments)("records", t.records)("digest", t.digest);
}

/// Exactly one of `next` (read on) and `complete` (the result ends here) is set.
struct Segment {
  static constexpr std::string_view kName = "segment";
  Position cut{};
  ResourceInfo resource;
  Revision revision{};  // the state read: the basis revision, or the view's
  std::optional<Id> view;
  Id index = 0;
  Id records_before = 0;
  List<Entry, kPageRecords> items;
  Digest chain{};  // after this segment's items
  std::optional<SegmentCursor> next;
  std::optional<Completion> complete;
  bool operator==(const Segment&) const = default;
};
template <typename V> void fields(V& v, Segment& t) {
  v("cut", t.cut)("resource", t.resource)("revision", t.revision)("view", t.view)("index", t.index)(
      "records_before", t.records_before)("items", t.items)("chain", t.chain)("next", t.next)("complete", t.complete);
}

/// The chain's start for the entries of `resource` at `revision`:
/// SHA-256("transit.segment.v1" NUL resource revision), the two ids as
/// 8-byte big-endian, so no other resource's or revision's result has the
/// same digest.
Digest segment_origin(ResourceId resource, Revision revision);
/// The chain after one more record: SHA-256(chain || canonical JSON of `entry`).
Digest segment_link(const Digest& chain, const Entry& entry);

}  // namespace cowboy::transit
