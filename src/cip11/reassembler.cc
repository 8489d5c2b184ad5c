#include "cip11/reassembler.h"

#include <algorithm>

#include "common/codec.h"

namespace cowboy::cip11 {

FrameReassembler::~FrameReassembler() { release(); }

void FrameReassembler::release() {
  if (budget_ && !payload_.empty()) budget_->give_back(payload_.size());
  payload_.clear();
  payload_.shrink_to_fit();
}

Res<Unit> FrameReassembler::refuse(Errc e) {
  error_ = e;
  release();
  return Err{e};
}

Res<Unit> FrameReassembler::push(ByteView bytes) {
  if (error_) return Err{*error_};
  while (!bytes.empty()) {
    if (prefix_have_ < 4) {
      std::size_t n = std::min(bytes.size(), 4 - prefix_have_);
      std::copy_n(bytes.begin(), n, prefix_ + prefix_have_);
      prefix_have_ += n;
      bytes = bytes.subspan(n);
      if (prefix_have_ < 4) break;
      length_ = codec::Reader(ByteView(prefix_, 4)).u32();  // the §12.1 u32 BE prefix, as decode_frame reads it
      if (length_ == 0) return refuse(Errc::kFrameEmpty);
      if (length_ > max_length_) return refuse(Errc::kFrameTooLarge);
      continue;
    }
    std::size_t n = std::min<std::size_t>(bytes.size(), length_ - payload_.size());
    if (budget_ && !budget_->try_take(n)) return refuse(Errc::kReadBudgetExhausted);
    payload_.insert(payload_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    bytes = bytes.subspan(n);
    if (payload_.size() < length_) break;
    // Whole: decode_body refuses a type byte outside the §12.2 table.
    auto frame = decode_body(static_cast<FrameType>(payload_[0]), ByteView(payload_).subspan(1));
    release();
    prefix_have_ = 0;
    if (!frame) return refuse(frame.error());
    ready_.push_back(std::move(*frame));
  }
  return Unit{};
}

Res<Unit> FrameReassembler::end() {
  if (error_) return Err{*error_};
  if (prefix_have_ > 0) return refuse(Errc::kFrameTruncated);
  return Unit{};
}

std::optional<Frame> FrameReassembler::next() {
  if (ready_.empty()) return std::nullopt;
  Frame f = std::move(ready_.front());
  ready_.erase(ready_.begin());
  return f;
}

}  // namespace cowboy::cip11
