// What a container gets of GPUs from DRA claims (rules/support/container_gpus),
// as tensor-parallel-gpu-count and cuda-visible-devices-index judge it: what a
// container sees of a claim is what its requests allocate, or only the named
// request's (kubernetes-gpu-semantics.md §15.2, §15.7). A request of
// allocationMode All gets every matching device of the node, a count no
// manifest tells: the container's device count is unknown, and nothing is
// judged against it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeInput;
using testing::only;

const Policy kRules = testing::onlyRules({"tensor-parallel-gpu-count", "cuda-visible-devices-index"});

const std::string kGpuClass =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n"
    "  selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}]\n---\n";

// A ResourceClaimTemplate `name` in namespace ml with one request `gpus` of `exactly`.
std::string claimTemplate(const std::string& name, const std::string& exactly) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
         ", namespace: ml}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpus\n        exactly: " +
         exactly + "\n---\n";
}

// A pod in ml whose one container lists claim g (from `templateName`) and runs `launch`.
std::string podOn(const std::string& templateName, const std::string& launch, const std::string& env = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"
         "  resourceClaims: [{name: g, resourceClaimTemplateName: " + templateName + "}]\n  containers:\n"
         "  - name: a\n    image: vllm/vllm-openai:v0.10.1\n    " + launch + "\n" + env +
         "    resources: {claims: [{name: g}]}\n";
}

const std::string kAllGpus = "{deviceClassName: gpu.nvidia.com, allocationMode: All}";
const std::string kEightVisible = "    env: [{name: CUDA_VISIBLE_DEVICES, value: \"0,1,2,3,4,5,6,7\"}]\n";

TEST(DraClaimDevices, AnAllocationModeAllClaimLeavesTheCountUnjudged) {
  // The red team's vLLM TP 8 on an all-GPUs claim (redteam31 A1): the real
  // scheduler allocated all 8 devices of the node to such a claim.
  const std::string input = kGpuClass + claimTemplate("all-gpus", kAllGpus) +
                            podOn("all-gpus", "args: [m, --tensor-parallel-size, \"8\"]", kEightVisible);
  EXPECT_THAT(judgeInput(input, kRules), IsEmpty());
}

TEST(DraClaimDevices, AnAllocationModeAllClaimIsNoMigDevice) {
  // Without the DeviceClass in view (the class is known by its name only)
  // and with torchrun: nothing says "1 MIG device".
  const std::string input = claimTemplate("all-gpus", kAllGpus) +
                            podOn("all-gpus", "command: [torchrun, --nproc-per-node=8, train.py]");
  EXPECT_THAT(judgeInput(input, kRules), IsEmpty());
}

TEST(DraClaimDevices, AnAllocationModeAllAlternativeLeavesTheCountUnjudged) {
  // firstAvailable: the scheduler may pick the All alternative.
  const std::string input =
      kGpuClass +
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: any, namespace: ml}\nspec:\n"
      "  spec:\n    devices:\n      requests:\n      - name: gpus\n        firstAvailable:\n"
      "        - {name: all, deviceClassName: gpu.nvidia.com, allocationMode: All}\n"
      "        - {name: two, deviceClassName: gpu.nvidia.com, count: 2}\n---\n" +
      podOn("any", "args: [m, --tensor-parallel-size, \"8\"]");
  EXPECT_THAT(judgeInput(input, kRules), IsEmpty());
}

TEST(DraClaimDevices, AnAllocationModeAllTemplateFromClusterFactsToo) {
  // What the webhook's watched cache holds: the template, not in the input.
  const auto cluster = testing::clusterOf(claimTemplate("all-gpus", kAllGpus));
  const auto f = testing::judgeWithCluster(
      podOn("all-gpus", "args: [m, --tensor-parallel-size, \"8\"]", kEightVisible), *cluster, kRules);
  EXPECT_THAT(f, IsEmpty());
}

TEST(DraClaimDevices, ACountedClaimIsStillJudged) {
  const std::string input = kGpuClass + claimTemplate("two", "{deviceClassName: gpu.nvidia.com, count: 2}") +
                            podOn("two", "args: [m, --tensor-parallel-size, \"8\"]", kEightVisible);
  const auto tp = only(judgeInput(input, kRules), "tensor-parallel-gpu-count");
  ASSERT_EQ(tp.size(), 1u);
  EXPECT_THAT(tp[0].message(), HasSubstr("of the container's 2 GPUs"));
  EXPECT_EQ(only(judgeInput(input, kRules), "cuda-visible-devices-index").size(), 1u);
}

// --- a container that names one request of a claim (redteam31 A9) -------------

TEST(DraClaimDevices, AContainerNamingOneRequestSeesOnlyItsDevices) {
  // Two requests of 2 GPUs each; container a names request a and runs TP 4
  // on its 2 GPUs (vLLM crashes), container b names b and runs TP 2 (fine).
  const std::string input =
      kGpuClass +
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two-requests, namespace: ml}\n"
      "spec:\n  spec:\n    devices:\n      requests:\n"
      "      - {name: a, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n"
      "      - {name: b, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: split, namespace: ml}\nspec:\n"
      "  resourceClaims: [{name: t, resourceClaimTemplateName: two-requests}]\n  containers:\n"
      "  - {name: a, image: vllm/vllm-openai:v0.10.1, args: [m, --tensor-parallel-size, \"4\"],\n"
      "     resources: {claims: [{name: t, request: a}]}}\n"
      "  - {name: b, image: vllm/vllm-openai:v0.10.1, args: [m, --tensor-parallel-size, \"2\"],\n"
      "     env: [{name: CUDA_VISIBLE_DEVICES, value: \"0,1\"}], resources: {claims: [{name: t, request: b}]}}\n";
  const auto f = judgeInput(input, kRules);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "tensor-parallel-gpu-count");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].args[1]");
  EXPECT_THAT(f[0].message(), HasSubstr("the container gets 2 GPUs"));
}

TEST(DraClaimDevices, ARequestOfNoGpuClassGivesTheContainerNoGpu) {
  // A NIC request beside the GPU request: the container naming the NIC gets no GPU to judge.
  const std::string input =
      kGpuClass +
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: mixed, namespace: ml}\n"
      "spec:\n  spec:\n    devices:\n      requests:\n"
      "      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n"
      "      - {name: nic, exactly: {deviceClassName: rdma.example.com, count: 1}}\n---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"
      "  resourceClaims: [{name: t, resourceClaimTemplateName: mixed}]\n  containers:\n"
      "  - {name: a, image: vllm/vllm-openai:v0.10.1, args: [m, --tensor-parallel-size, \"4\"],\n"
      "     resources: {claims: [{name: t, request: nic}]}}\n";
  EXPECT_THAT(judgeInput(input, kRules), IsEmpty());
}

// --- claim templates are namespaced (redteam31 A12) ---------------------------

// A ResourceClaimTemplate `gpus` of `count` GPUs in `ns` (none: no namespace written).
std::string gpusTemplateIn(const std::string& ns, int count) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpus" +
         (ns.empty() ? std::string() : ", namespace: " + ns) +
         "}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
         "        exactly: {deviceClassName: gpu.nvidia.com, count: " + std::to_string(count) + "}\n---\n";
}

// A vLLM pod in `ns` running tensor-parallel `tp` on claim g from template gpus.
std::string tpPodIn(const std::string& ns, const std::string& name, int tp) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec:\n"
         "  resourceClaims: [{name: g, resourceClaimTemplateName: gpus}]\n  containers:\n  - name: a\n"
         "    image: vllm/vllm-openai:v0.10.1\n    args: [m, --tensor-parallel-size, \"" + std::to_string(tp) +
         "\"]\n    resources: {claims: [{name: g}]}\n---\n";
}

TEST(DraClaimDevices, APodNamesTheTemplateOfItsOwnNamespace) {
  // Two teams, one template name each: team-b's 8 GPUs serve team-b's TP 8,
  // team-a's 1 GPU team-a's TP 1, in either order of the input.
  const std::string pods = tpPodIn("team-b", "big", 8) + tpPodIn("team-a", "small", 1);
  EXPECT_THAT(judgeInput(kGpuClass + gpusTemplateIn("team-b", 8) + gpusTemplateIn("team-a", 1) + pods, kRules),
              IsEmpty());
  EXPECT_THAT(judgeInput(kGpuClass + gpusTemplateIn("team-a", 1) + gpusTemplateIn("team-b", 8) + pods, kRules),
              IsEmpty());
}

TEST(DraClaimDevices, AnotherNamespacesTemplateIsNeverTaken) {
  // team-a's 1-GPU template says nothing of a pod in team-b: its count is unknown.
  EXPECT_THAT(judgeInput(kGpuClass + gpusTemplateIn("team-a", 1) + tpPodIn("team-b", "big", 8), kRules), IsEmpty());
}

TEST(DraClaimDevices, ATemplateWithoutNamespaceServesThePodWhereItIsApplied) {
  const auto f = only(judgeInput(kGpuClass + gpusTemplateIn("", 1) + tpPodIn("team-b", "big", 8), kRules),
                      "tensor-parallel-gpu-count");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("the container gets 1 GPU"));
}

}  // namespace
}  // namespace gpuguard

// --- a firstAvailable list: the first alternative is preferred (red team 32 B12) ---

namespace gpuguard {
namespace {

// A template `fa` whose one request prefers 8 GPUs and falls back to 4
// (KEP-4816: the scheduler allocates the first alternative a node can give).
const std::string kEightElseFour =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: fa, namespace: ml}\nspec:\n"
    "  spec:\n    devices:\n      requests:\n      - name: r\n        firstAvailable:\n"
    "        - {name: big, deviceClassName: gpu.nvidia.com, count: 8}\n"
    "        - {name: small, deviceClassName: gpu.nvidia.com, count: 4}\n---\n";

// What a launch on that template is told: the severity of
// tensor-parallel-gpu-count (none: not judged) and what its message says.
struct FallbackCase {
  const char* name;
  std::string launch;
  std::optional<Severity> severity;
  std::vector<std::string> says;
};

void PrintTo(const FallbackCase& c, std::ostream* os) { *os << c.name; }

class LaunchOnEightElseFour : public ::testing::TestWithParam<FallbackCase> {};

TEST_P(LaunchOnEightElseFour, IsJudgedByThePreferredAlternative) {
  const FallbackCase& c = GetParam();
  const std::string input = kGpuClass + kEightElseFour + podOn("fa", c.launch);
  const auto tp = only(judgeInput(input, kRules), "tensor-parallel-gpu-count");
  if (!c.severity) {
    EXPECT_THAT(tp, IsEmpty());
    return;
  }
  ASSERT_EQ(tp.size(), 1u);
  EXPECT_EQ(tp[0].severity, *c.severity);
  for (const std::string& said : c.says) EXPECT_THAT(tp[0].message(), HasSubstr(said));
}

INSTANTIATE_TEST_SUITE_P(
    DraClaimDevices, LaunchOnEightElseFour,
    ::testing::Values(
        // The red team's vLLM TP 8 on [8 GPUs, 4 GPUs]: kube-scheduler v1.37.2
        // allocated the 8-GPU alternative; only the fallback would crash it.
        FallbackCase{"ALaunchThePreferredAlternativeFitsIsOnlyWarnedOfTheFallback",
                     "args: [m, --tensor-parallel-size, \"8\"]", Severity::Warning,
                     {"gets 8 GPUs from the first firstAvailable alternatives", "but 4 if it falls back"}},
        FallbackCase{"ALaunchNoAlternativeFitsIsStillAnError", "args: [m, --tensor-parallel-size, \"16\"]",
                     Severity::Error, {"the container gets 4 GPUs"}},
        FallbackCase{"TorchrunThePreferredAlternativeFitsIsOnlyWarnedOfTheFallback",
                     "command: [torchrun, --nproc-per-node=8, t.py]", Severity::Warning, {"but 4 if it falls back"}},
        // Red team 32 B12's leftover: TP 4 on [8 GPUs, 4 GPUs]. The scheduler
        // gives 8 whenever a node can, so 4 sit idle (the fallback fits exactly).
        FallbackCase{"IdleGpusAreJudgedOnThePreferredAlternative", "args: [m, --tensor-parallel-size, \"4\"]",
                     Severity::Warning,
                     {"gets 8 GPUs from the first firstAvailable alternatives", "4 GPUs would sit idle"}}),
    [](const auto& info) { return std::string(info.param.name); });

// What IdleGpusAreJudgedOnThePreferredAlternative is told is what a plain
// request of 8 GPUs is told for TP 4.
TEST(DraClaimDevices, APlainRequestOfEightGpusForTp4WarnsOfTheSameIdleGpus) {
  const std::string plain =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
      "  - name: a\n    image: vllm/vllm-openai:v0.10.1\n    args: [m, --tensor-parallel-size, \"4\"]\n"
      "    resources: {limits: {nvidia.com/gpu: 8}}\n";
  const auto tp = only(judgeInput(plain, kRules), "tensor-parallel-gpu-count");
  ASSERT_EQ(tp.size(), 1u);
  EXPECT_EQ(tp[0].severity, Severity::Warning);
  EXPECT_THAT(tp[0].message(), HasSubstr("4 GPUs would sit idle"));
}

TEST(DraClaimDevices, ALaunchThatFitsThePreferredAlternativeExactlyIsNotJudged) {
  // [4 GPUs, 8 GPUs]: the scheduler gives 4 whenever it can; TP 4 uses them all.
  const std::string fourElseEight =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: fa, namespace: ml}\nspec:\n"
      "  spec:\n    devices:\n      requests:\n      - name: r\n        firstAvailable:\n"
      "        - {name: small, deviceClassName: gpu.nvidia.com, count: 4}\n"
      "        - {name: big, deviceClassName: gpu.nvidia.com, count: 8}\n---\n";
  const std::string input = kGpuClass + fourElseEight + podOn("fa", "args: [m, --tensor-parallel-size, \"4\"]");
  EXPECT_THAT(only(judgeInput(input, kRules), "tensor-parallel-gpu-count"), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
