// The node's dependency budgets over real HTTP (docs/transit.md, decision
// 156): configured on the node, reported in its capabilities, and refused
// as dependency_budget when create, spawn or create_resource would exceed
// them; a restart keeps counting what is owned.
#include "state_fixture.h"

namespace cowboy::transit {
namespace {

class BudgetTest : public StateTest {
 protected:
  void SetUp() override {
    budgets_ = {2, 3};
    StateTest::SetUp();
  }
  static List<Name, kRequiredNames> names(std::vector<std::string> n) {
    List<Name, kRequiredNames> out;
    for (auto& s : n) out.items.push_back(Name{s});
    return out;
  }
};

TEST_F(BudgetTest, TheConfiguredBudgetsAreReportedAndEnforced) {
  auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_EQ(caps->required_resource_budget, 2u);
  EXPECT_EQ(caps->lifetime_owner_budget, 3u);

  // Required resources: two declared are admitted, three are refused at create and at spawn.
  const auto over = refused(admin_->submit(CreateProcess{Pid{7}, names({"a", "b", "c"}), false}));
  EXPECT_EQ(over.reason, Reason::kDependencyBudget);
  EXPECT_EQ(over.code, RejectionCode::kInvalidProposal);
  EXPECT_NE(over.message.value.find("budget of 2"), std::string::npos) << over.message.value;
  const ResourceId a = resource("a"), b = resource("b");
  accept(*admin_, CreateProcess{Pid{7}, names({"a", "b"}), false});
  accept(*admin_, Associate{Pid{7}, {"a"}, a});
  accept(*admin_, Associate{Pid{7}, {"b"}, b});
  accept(*admin_, Initialize{Pid{7}, 0});
  const Id generation = ok<ProcessChanged>(admin_->submit(Own{Pid{7}, 1})).generation;  // spawn is its executor's
  EXPECT_EQ(refused(admin_->submit(Spawn{Pid{7}, generation, Pid{8}, names({"a", "b", "c"}), false})).reason, Reason::kDependencyBudget);

  // Lifetime owner: three resources owned by process 7, the fourth refused, across a restart too.
  for (int i = 0; i < 3; ++i) resource(numbered("owned", i), 7);
  EXPECT_EQ(refused(admin_->submit(CreateResource{{"owned3"}, Pid{7}})).reason, Reason::kDependencyBudget);
  accept(*admin_, CreateResource{{"free"}, std::nullopt});  // a realm resource has no lifetime owner
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(refused(admin_->submit(CreateResource{{"owned3"}, Pid{7}})).reason, Reason::kDependencyBudget);
}

// Without configuration: the contract's four required names, 64 owned resources.
class DefaultBudgetTest : public StateTest {};

TEST_F(DefaultBudgetTest, TheDefaultsAreReported) {
  auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_EQ(caps->required_resource_budget, kRequiredNames);
  EXPECT_EQ(caps->lifetime_owner_budget, kLifetimeOwnerBudget);
}

}  // namespace
}  // namespace cowboy::transit
