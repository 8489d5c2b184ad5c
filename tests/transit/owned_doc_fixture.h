// The fixture of the block and storage-maintenance tests: the state tests'
// node with a resource "doc" and process kPid initialized on it and owned by
// the root, so that the root's turns of kPid write doc.
#pragma once

#include "state_fixture.h"

namespace cowboy::transit {

class OwnedDocTest : public StateTest {
 protected:
  void SetUp() override {
    StateTest::SetUp();
    doc_ = resource("doc");
    process(doc_);
    generation_ = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
  }

  ResourceId doc_{};
  Id generation_ = 0;  // kPid's, owned by the root
};

}  // namespace cowboy::transit
