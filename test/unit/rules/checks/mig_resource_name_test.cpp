// mig-resource-name: nvidia.com/mig-* must be a profile the NVIDIA device
// plugin advertises ("mig-" + go-nvlib's MigProfileInfo.String() with '+'
// turned into '.'), and a container gets whole GPUs or MIG slices, not both.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::gpuPod;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kMigOnly = onlyRules({"mig-resource-name"});

std::vector<Finding> migFindings(const std::string& resources, const std::string& kind = "Pod",
                                 const Policy& policy = kMigOnly) {
  return judgeYaml(gpuPod(resources, kind), policy);
}

// --- names the device plugin advertises --------------------------------------

class AdvertisedMigProfile : public ::testing::TestWithParam<const char*> {};

TEST_P(AdvertisedMigProfile, IsAccepted) {
  EXPECT_THAT(rulesHit(migFindings(std::string("limits:\n  nvidia.com/") + GetParam() + ": 1")), IsEmpty())
      << GetParam();
}

INSTANTIATE_TEST_SUITE_P(
    ReferenceExamples, AdvertisedMigProfile,
    ::testing::Values(
        // A100-40GB, A100-80GB, H100-80GB (kubernetes-gpu-semantics.md §9.4)
        "mig-1g.5gb", "mig-2g.10gb", "mig-3g.20gb", "mig-7g.40gb", "mig-1g.10gb", "mig-2g.20gb", "mig-3g.40gb",
        "mig-7g.80gb", "mig-1g.10gb.me", "mig-1g.20gb", "mig-4g.40gb",
        // GH200 (corpus: k8s-dra-driver-gpu), A30
        "mig-1g.12gb", "mig-1g.6gb", "mig-4g.24gb",
        // H200, B200, GB300, and a profile mig-parted lists without a GPU
        "mig-1g.18gb.me", "mig-7g.141gb", "mig-3g.90gb", "mig-7g.278gb", "mig-3g.95gb",
        // attribute suffixes (RTX PRO 6000 Blackwell) and time-sliced renames
        "mig-1g.24gb.me.all", "mig-1g.24gb.gfx", "mig-1g.24gb-me", "mig-4g.96gb.gfx", "mig-1g.5gb.shared",
        "mig-1g.10gb.me.shared"));

// --- well-formed names no GPU offers: warnings ----------------------------------

struct UnofferedProfile {
  const char* name;
  const char* why;  // expected in the message
};

void PrintTo(const UnofferedProfile& c, std::ostream* os) { *os << c.name; }

class NoGpuOffers : public ::testing::TestWithParam<UnofferedProfile> {};

TEST_P(NoGpuOffers, IsAWarningNamingTheProfilesThatExist) {
  const UnofferedProfile c = GetParam();
  const auto f = migFindings(std::string("limits:\n  nvidia.com/") + c.name + ": 1");
  ASSERT_EQ(f.size(), 1u) << c.name;
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), std::string("spec.containers[0].resources.limits[nvidia.com/") + c.name + "]");
  EXPECT_THAT(f[0].message(), HasSubstr("no MIG-capable GPU offers the profile"));
  EXPECT_THAT(f[0].message(), HasSubstr(c.why)) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    ProfileList, NoGpuOffers,
    ::testing::Values(
        // a memory size no GPU pairs with the slice count
        UnofferedProfile{"mig-1g.40gb", "the 1-slice profiles are 1g.5gb, 1g.10gb, 1g.20gb, 1g.6gb"},
        UnofferedProfile{"mig-3g.30gb", "the 3-slice profiles are 3g.20gb, 3g.40gb, 3g.47gb"},
        // slice counts no GPU has
        UnofferedProfile{"mig-5g.50gb", "no GPU has 5-slice profiles"},
        UnofferedProfile{"mig-8g.192gb", "no GPU has 8-slice profiles"},
        // attributes on profiles that do not carry them
        UnofferedProfile{"mig-3g.40gb.me", "3g.40gb exists without the .me attribute"},
        UnofferedProfile{"mig-1g.10gb.me.all", "1g.10gb exists without the .me.all attribute"},
        UnofferedProfile{"mig-7g.80gb.gfx", "7g.80gb exists without the .gfx attribute"}));

TEST(MigResourceName, AnUnofferedProfileIsAWarningEvenWhereGrammarErrorsAreErrors) {
  // The grammar check stays an error; the profile list only warns, since a
  // GPU newer than the list may offer the profile.
  const auto f = migFindings("limits:\n  nvidia.com/mig-1g.40gb: 1\n  nvidia.com/mig-1c.1g.5gb: 1");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[1].severity, Severity::Warning);
}

// --- names nothing advertises -------------------------------------------------

struct WrongName {
  const char* name;
  const char* fix;  // expected in the message
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const WrongName& c, std::ostream* os) { *os << c.name; }

class UnadvertisedMigName : public ::testing::TestWithParam<WrongName> {};

TEST_P(UnadvertisedMigName, IsReportedWithTheFix) {
  const WrongName c = GetParam();
  const auto f = migFindings(std::string("limits:\n  \"nvidia.com/") + c.name + "\": 1");
  ASSERT_EQ(f.size(), 1u) << c.name;
  EXPECT_EQ(f[0].rule, "mig-resource-name");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), std::string("spec.containers[0].resources.limits[nvidia.com/") + c.name + "]");
  EXPECT_EQ(f[0].value, std::string("nvidia.com/") + c.name);
  EXPECT_THAT(f[0].message(), HasSubstr(std::string("Invalid value: \"nvidia.com/") + c.name + "\""));
  EXPECT_THAT(f[0].message(), HasSubstr(c.fix)) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    Misspellings, UnadvertisedMigName,
    ::testing::Values(
        // '+' is written as '.' in resource names
        WrongName{"mig-1g.10gb+me", "write nvidia.com/mig-1g.10gb.me"},
        WrongName{"mig-1g.10gb+me.all", "write nvidia.com/mig-1g.10gb.me.all"},
        WrongName{"mig-1g.10gb+gfx", "write nvidia.com/mig-1g.10gb.gfx"},
        // C == G is printed without the <C>c. part; C != G is never advertised
        WrongName{"mig-1c.1g.5gb", "write nvidia.com/mig-1g.5gb"},
        WrongName{"mig-3c.3g.40gb", "write nvidia.com/mig-3g.40gb"},
        WrongName{"mig-1c.2g.10gb", "compute-instance profiles (1c.2g) are not advertised"},
        // case and punctuation
        WrongName{"MIG-1g.10gb", "case-sensitive and the device plugin advertises them in lower case; write nvidia.com/mig-1g.10gb"},
        WrongName{"mig-1g.10GB", "write nvidia.com/mig-1g.10gb"},
        WrongName{"mig1g.10gb", "write nvidia.com/mig-1g.10gb"},
        // not a profile at all
        WrongName{"mig-1g", "not a MIG profile"}, WrongName{"mig-10gb", "not a MIG profile"},
        WrongName{"mig-1g-10gb", "not a MIG profile"}, WrongName{"mig-9g.90gb", "not a MIG profile"},
        WrongName{"mig-0g.5gb", "not a MIG profile"}, WrongName{"mig-1g.05gb", "not a MIG profile"},
        WrongName{"mig-1g.10gb.me.me", "not a MIG profile"}, WrongName{"mig-1g.10gb-gfx", "not a MIG profile"},
        WrongName{"mig-", "not a MIG profile"}, WrongName{"mig", "not a MIG profile"}));

TEST(MigResourceName, RequestsAreCheckedLikeLimits) {
  const auto f = migFindings("limits:\n  nvidia.com/mig-1g.10gb: 1\nrequests:\n  \"nvidia.com/mig-1g.10gb+me\": 1",
                             "Deployment");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].resources.requests[nvidia.com/mig-1g.10gb+me]");
}

TEST(MigResourceName, CustomResourcesAreCheckedToo) {
  const auto f = judgeYaml(R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec:
    template:
      spec:
        containers:
        - name: head
          image: rayproject/ray
          resources: {limits: {"nvidia.com/mig-3g.40gb+me": 1}}
)",
                           kMigOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.headGroupSpec.template.spec.containers[0].resources.limits[nvidia.com/mig-3g.40gb+me]");
}

TEST(MigResourceName, OtherResourcesAreNotItsBusiness) {
  EXPECT_THAT(rulesHit(migFindings("limits:\n  nvidia.com/gpu: 1\n  nvidia.com/gpu.shared: 1\n  example.com/mig-x: 1")),
              IsEmpty());
}

TEST(MigResourceName, NamesListedExactlyInThePolicyAreAccepted) {
  Policy custom = kMigOnly;
  custom.gpuResources.push_back("nvidia.com/mig-small");
  EXPECT_THAT(rulesHit(migFindings("limits:\n  nvidia.com/mig-small: 1", "Pod", custom)), IsEmpty());
  EXPECT_THAT(rulesHit(migFindings("limits:\n  nvidia.com/mig-small: 1")), ElementsAre("mig-resource-name"));
}

// --- whole GPUs and MIG slices in one container -------------------------------

TEST(MigResourceName, AContainerMixingWholeGpusAndMigSlicesIsAWarning) {
  // Strategy mixed nodes advertise both (reference §9.4), and the API server
  // accepts it: a warning, in no API-server wording.
  const auto f = migFindings("limits:\n  nvidia.com/gpu: 1\n  nvidia.com/mig-1g.10gb: 1");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources");
  EXPECT_THAT(f[0].message(), HasSubstr("whole GPUs (nvidia.com/gpu) and MIG slices (nvidia.com/mig-1g.10gb)"));
  EXPECT_THAT(f[0].message(), HasSubstr("strategy mixed"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("Forbidden")));
}

// A Pod whose container mixes a whole GPU and a slice, with `selector` as its nodeSelector.
std::string mixOn(const std::string& selector) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: mix}\nspec:\n  nodeSelector: " + selector +
         "\n  containers:\n  - name: c\n    image: x\n"
         "    resources: {limits: {nvidia.com/gpu: 1, nvidia.com/mig-1g.10gb: 1}}\n";
}

TEST(MigResourceName, AMixOnStrategyMixedNodesIsAWarning) {
  const auto f = judgeYaml(mixOn("{nvidia.com/mig.strategy: mixed}"), kMigOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
}

TEST(MigResourceName, AMixOnNodesRequiredToRunStrategySingleIsAnError) {
  const auto f = judgeYaml(mixOn("{nvidia.com/mig.strategy: single}"), kMigOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("requires nvidia.com/mig.strategy=single"));
  EXPECT_THAT(f[0].message(), HasSubstr("stays Pending"));
}

TEST(MigResourceName, WholeGpusOrMigSlicesAloneAreFine) {
  EXPECT_THAT(rulesHit(migFindings("limits:\n  nvidia.com/gpu: 2")), IsEmpty());
  EXPECT_THAT(rulesHit(migFindings("limits:\n  nvidia.com/mig-1g.10gb: 2\n  nvidia.com/mig-2g.20gb: 1")), IsEmpty());
}

TEST(MigResourceName, AZeroCountIsNotAMix) {
  EXPECT_THAT(rulesHit(migFindings("limits:\n  nvidia.com/gpu: 0\n  nvidia.com/mig-1g.10gb: 1")), IsEmpty());
}

TEST(MigResourceName, DifferentContainersMayDiffer) {
  const auto f = judgeYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
  - {name: b, image: x, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}}
)",
                           kMigOnly);
  EXPECT_THAT(rulesHit(f), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
