// cuda-driver-too-old and CUDA forward compatibility: a CUDA version newer than
// the driver runs on an older branch through the cuda-compat package, on
// NVIDIA data-center GPUs only. The images that carry it name the branches:
// nvidia/cuda 13.0.x's NVIDIA_REQUIRE_CUDA brand clauses (R535, R550, R565,
// the recorded list cut off there), NGC 24.05 (CUDA 12.4.1): R470, R525,
// R535, R545 (kubernetes-gpu-semantics.md §14.9, §10.2, §15.7). On a listed
// branch the finding is a warning naming that condition; it stays an error
// where the image surely fails: a branch the list does not name, a version
// whose list is not known, only GeForce GPUs selected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;

const Policy kCudaOnly = onlyRules({"cuda-driver-too-old"});

// A Pod running `image` with nodeSelector pairs `selector` ("key: value" lines at 4 spaces).
std::string pod(const std::string& image, const std::string& selector) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
         "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
         "  nodeSelector:\n" + selector +
         "  containers:\n  - name: c\n    image: " + image + "\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

std::string onDriver(const std::string& major, const std::string& product = "NVIDIA-H100-80GB-HBM3") {
  return "    nvidia.com/cuda.driver-version.major: \"" + major + "\"\n    nvidia.com/gpu.product: " + product + "\n";
}

// The one finding's severity and message, or a note that there is none.
struct Verdict {
  std::optional<Severity> severity;
  std::string message;
};
Verdict verdictOf(const std::string& yaml) {
  const std::vector<Finding> f = judgeYaml(yaml, kCudaOnly);
  if (f.size() != 1) return {std::nullopt, std::to_string(f.size()) + " findings"};
  return {f[0].severity, f[0].message()};
}

TEST(CudaForwardCompat, ACuda13ImageOnAListedDataCenterBranchIsAWarningNamingTheCondition) {
  // The red team's pod (session 31, A17): nvidia/cuda 13.0.1 pinned to R550 on H100.
  const Verdict v = verdictOf(pod("nvidia/cuda:13.0.1-runtime-ubuntu24.04", onDriver("550")));
  EXPECT_EQ(v.severity, Severity::Warning) << v.message;
  EXPECT_THAT(v.message, HasSubstr("forward-compatibility mode (nvidia/cuda 13.0.x's NVIDIA_REQUIRE_CUDA"));
  EXPECT_THAT(v.message, HasSubstr("only on NVIDIA data-center GPUs with the cuda-compat package"));
}

TEST(CudaForwardCompat, NgcReleaseNotesAdmitR470ForCuda12Point4OnDataCenterGpus) {
  // The red team's pod: NGC pytorch 24.05 (CUDA 12.4.1) pinned to R470 on A100.
  const Verdict v = verdictOf(pod("nvcr.io/nvidia/pytorch:24.05-py3", onDriver("470", "NVIDIA-A100-SXM4-80GB")));
  EXPECT_EQ(v.severity, Severity::Warning) << v.message;
  EXPECT_THAT(v.message, HasSubstr("NGC 24.05 release notes"));
}

TEST(CudaForwardCompat, ABranchBeyondTheRecordedListIsAWarningThatSaysItIsNotVerified) {
  // NGC 25.10 (CUDA 13.0.2) on R570: the recorded list ends at 565 and may go on.
  const Verdict v = verdictOf(pod("nvcr.io/nvidia/pytorch:25.10-py3", onDriver("570")));
  EXPECT_EQ(v.severity, Severity::Warning) << v.message;
  EXPECT_THAT(v.message, HasSubstr("not verified"));
}

TEST(CudaForwardCompat, ABranchTheListDoesNotNameIsStillAnError) {
  // 545 lies between the listed 535 and 550; 470 below them all.
  EXPECT_EQ(verdictOf(pod("nvidia/cuda:13.0.1-runtime-ubuntu24.04", onDriver("545"))).severity, Severity::Error);
  EXPECT_EQ(verdictOf(pod("nvidia/cuda:13.0.1-runtime-ubuntu24.04", onDriver("470"))).severity, Severity::Error);
}

TEST(CudaForwardCompat, OnlyGeForceGpusSelectedIsStillAnErrorThatSaysWhy) {
  const Verdict v = verdictOf(pod("nvidia/cuda:13.0.1-runtime-ubuntu24.04", onDriver("550", "NVIDIA-GeForce-RTX-4090")));
  EXPECT_EQ(v.severity, Severity::Error);
  EXPECT_THAT(v.message, HasSubstr("admits only GeForce GPUs"));
  EXPECT_THAT(v.message, HasSubstr("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"));
}

TEST(CudaForwardCompat, VersionsAndImagesWithoutAKnownListKeepTheFloor) {
  // No source records CUDA 12.8's list; a pytorch/pytorch image carries no cuda-compat.
  EXPECT_EQ(verdictOf(pod("nvidia/cuda:12.8.1-runtime-ubuntu22.04", onDriver("470"))).severity, Severity::Error);
  EXPECT_EQ(verdictOf(pod("pytorch/pytorch:2.3.0-cuda12.4-cudnn9-runtime", onDriver("470"))).severity,
            Severity::Error);
}

TEST(CudaForwardCompat, EveryOldBranchTheSelectionAdmitsMustBeListed) {
  const std::string either =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"550\", \"SECOND\"]}\n"
      "  containers:\n  - name: c\n    image: nvidia/cuda:13.0.1-runtime-ubuntu24.04\n"
      "    resources: {limits: {nvidia.com/gpu: 1}}\n";
  std::string listed = either, unlisted = either;
  listed.replace(listed.find("SECOND"), 6, "535");
  unlisted.replace(unlisted.find("SECOND"), 6, "545");
  EXPECT_EQ(verdictOf(listed).severity, Severity::Warning);
  EXPECT_EQ(verdictOf(unlisted).severity, Severity::Error);
}

TEST(CudaForwardCompat, WithClusterFactsListedBranchesOfDataCenterNodesWarn) {
  // The red team's unpinned pod against two H100 nodes on R550 (the webhook's watched cache).
  const auto nodeNamed = [](const std::string& name, const std::string& product) {
    return testing::gpuNode({.name = name,
                             .driver = "550",
                             .labels = "nvidia.com/gpu.product: " + product,
                             .machine = "cpu: \"64\", memory: 512Gi, pods: \"110\""});
  };
  const std::string unpinned =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n  - name: c\n"
      "    image: nvidia/cuda:13.0.1-runtime-ubuntu24.04\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
  const auto h100 = testing::clusterOf(nodeNamed("gpu-1", "NVIDIA-H100-80GB-HBM3") +
                                       nodeNamed("gpu-2", "NVIDIA-H100-80GB-HBM3"));
  const std::vector<Finding> onH100 = testing::judgeWithCluster(unpinned, *h100, kCudaOnly);
  ASSERT_EQ(onH100.size(), 1u);
  EXPECT_EQ(onH100[0].severity, Severity::Warning);
  EXPECT_THAT(onH100[0].message(), HasSubstr("GPU nodes this pod can reach run driver 550 (2 nodes: gpu-1, gpu-2)"));
  const auto geforce = testing::clusterOf(nodeNamed("desk-1", "NVIDIA-GeForce-RTX-4090"));
  const std::vector<Finding> onGeForce = testing::judgeWithCluster(unpinned, *geforce, kCudaOnly);
  ASSERT_EQ(onGeForce.size(), 1u);
  EXPECT_EQ(onGeForce[0].severity, Severity::Error);
}

}  // namespace
}  // namespace gpuguard
