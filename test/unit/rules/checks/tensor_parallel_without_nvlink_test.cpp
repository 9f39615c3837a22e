// tensor-parallel-without-nvlink: tensor parallelism > 1 on a node selection
// that only admits PCIe-only GPUs (kubernetes-gpu-semantics.md §12).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kNvlinkOnly = onlyRules({"tensor-parallel-without-nvlink"});

// A vLLM Deployment with this scheduling block (indented for the pod spec)
// and these args.
std::string vllm(const std::string& scheduling, const std::string& args = "--tensor-parallel-size=2") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n" + scheduling +
         "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n        args: [--model=m, " +
         args + "]\n        resources: {limits: {nvidia.com/gpu: 2}}\n";
}

std::string selector(const std::string& key, const std::string& value) {
  return "      nodeSelector:\n        " + key + ": " + value + "\n";
}

std::string requiredIn(const std::string& terms) {
  return "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
         "            nodeSelectorTerms:\n" +
         terms;
}

std::vector<Finding> judge(const std::string& yaml) { return judgeYaml(yaml, kNvlinkOnly); }

TEST(TensorParallelWithoutNvlink, TensorParallelOnL4NodesSuggestsPipelineParallelism) {
  const auto f = judge(vllm(selector("cloud.google.com/gke-accelerator", "nvidia-l4")));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "tensor-parallel-without-nvlink");
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].args[1]");
  EXPECT_THAT(f[0].message(), HasSubstr("tensor parallelism over 2 L4 GPUs (nodeSelector "
                                      "cloud.google.com/gke-accelerator=nvidia-l4), which have no NVLink"));
  EXPECT_THAT(f[0].message(), HasSubstr("--tensor-parallel-size 1 --pipeline-parallel-size 2"));
}

TEST(TensorParallelWithoutNvlink, TensorParallelOneIsFine) {
  EXPECT_THAT(judge(vllm(selector("cloud.google.com/gke-accelerator", "nvidia-l4"), "--tensor-parallel-size=1")),
              IsEmpty());
  EXPECT_THAT(judge(vllm(selector("cloud.google.com/gke-accelerator", "nvidia-l4"),
                         "--tensor-parallel-size=1, --pipeline-parallel-size=2")),
              IsEmpty());
}

TEST(TensorParallelWithoutNvlink, NvlinkGpusAreFine) {
  EXPECT_THAT(judge(vllm(selector("cloud.google.com/gke-accelerator", "nvidia-h100-80gb"))), IsEmpty());
  EXPECT_THAT(judge(vllm(selector("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"))), IsEmpty());
}

TEST(TensorParallelWithoutNvlink, GpusWithAnOptionalBridgeAreNotReported) {
  for (const char* p : {"NVIDIA-A100-PCIE-40GB", "NVIDIA-H100-PCIe", "NVIDIA-H100-NVL", "NVIDIA-A40", "NVIDIA-A30"}) {
    EXPECT_THAT(judge(vllm(selector("nvidia.com/gpu.product", p))), IsEmpty()) << p;
  }
}

TEST(TensorParallelWithoutNvlink, NoGpuModelSelectedMeansNoFinding) {
  EXPECT_THAT(judge(vllm("")), IsEmpty());
  EXPECT_THAT(judge(vllm(selector("nvidia.com/cuda.driver-version.major", "\"550\""))), IsEmpty());
}

struct PcieLabel {
  const char* key;
  const char* value;
  const char* gpu;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const PcieLabel& c, std::ostream* os) { *os << c.key << "=" << c.value; }

class PcieOnlySelection : public ::testing::TestWithParam<PcieLabel> {};

TEST_P(PcieOnlySelection, IsReported) {
  const PcieLabel c = GetParam();
  const auto f = judge(vllm(selector(c.key, c.value)));
  ASSERT_EQ(f.size(), 1u) << c.key << "=" << c.value;
  EXPECT_THAT(f[0].message(), HasSubstr(std::string(" ") + c.gpu + " GPUs")) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    Labels, PcieOnlySelection,
    ::testing::Values(PcieLabel{"nvidia.com/gpu.product", "NVIDIA-L4", "L4"},
                      PcieLabel{"nvidia.com/gpu.product", "Tesla-T4", "T4"},
                      PcieLabel{"nvidia.com/gpu.product", "Tesla-T4-SHARED", "T4"},
                      PcieLabel{"nvidia.com/gpu.product", "NVIDIA-A10G", "A10G"},
                      PcieLabel{"nvidia.com/gpu.product", "NVIDIA-L40S", "L40S"},
                      PcieLabel{"nvidia.com/gpu.product", "NVIDIA-GeForce-RTX-4090", "GeForce-RTX-4090"},
                      PcieLabel{"nvidia.com/gpu.product", "NVIDIA-RTX-6000-Ada-Generation", "RTX-6000-Ada-Generation"},
                      PcieLabel{"nvidia.com/gpu.product", "Tesla-V100-PCIE-16GB", "V100-PCIE-16GB"},
                      PcieLabel{"cloud.google.com/gke-accelerator", "nvidia-tesla-t4", "T4"},
                      PcieLabel{"karpenter.k8s.aws/instance-gpu-name", "a10g", "A10G"},
                      PcieLabel{"karpenter.k8s.aws/instance-gpu-name", "l40s", "L40S"},
                      PcieLabel{"node.kubernetes.io/instance-type", "g5.12xlarge", "A10G"},
                      PcieLabel{"node.kubernetes.io/instance-type", "g6.12xlarge", "L4"},
                      PcieLabel{"node.kubernetes.io/instance-type", "g6e.48xlarge", "L40S"},
                      PcieLabel{"node.kubernetes.io/instance-type", "g4dn.12xlarge", "T4"},
                      PcieLabel{"node.kubernetes.io/instance-type", "ml.g5.8xlarge", "A10G"},
                      PcieLabel{"beta.kubernetes.io/instance-type", "g2-standard-24", "L4"},
                      // Blackwell workstation-class server GPUs: PCIe Gen5, no NVLink (reference §14.12)
                      PcieLabel{"nvidia.com/gpu.product", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
                                "RTX-PRO-6000-Blackwell-Server-Edition"},
                      PcieLabel{"nvidia.com/gpu.product", "NVIDIA-RTX-PRO-4500-Blackwell-Server-Edition",
                                "RTX-PRO-4500-Blackwell-Server-Edition"},
                      PcieLabel{"node.kubernetes.io/instance-type", "g7e.48xlarge", "RTX PRO 6000 Blackwell"},
                      PcieLabel{"node.kubernetes.io/instance-type", "g7.12xlarge", "RTX PRO 4500 Blackwell"},
                      PcieLabel{"node.kubernetes.io/instance-type", "g4-standard-96", "RTX PRO 6000 Blackwell"}));

TEST(TensorParallelWithoutNvlink, OtherInstanceTypesAreNotReported) {
  for (const char* t : {"p4d.24xlarge", "p5.48xlarge", "p6-b200.48xlarge", "a2-highgpu-2g", "a4-highgpu-8g",
                        "g4ad.8xlarge", "g5"}) {
    EXPECT_THAT(judge(vllm(selector("node.kubernetes.io/instance-type", t))), IsEmpty()) << t;
  }
}

TEST(TensorParallelWithoutNvlink, EveryInValueMustBePcieOnly) {
  const std::string pcie =
      "            - matchExpressions:\n"
      "              - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4, Tesla-T4]}\n";
  const auto f = judge(vllm(requiredIn(pcie)));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("L4, T4 GPUs"));
  const std::string mixed =
      "            - matchExpressions:\n"
      "              - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4, NVIDIA-H100-80GB-HBM3]}\n";
  EXPECT_THAT(judge(vllm(requiredIn(mixed))), IsEmpty());
}

TEST(TensorParallelWithoutNvlink, EveryOredTermMustBePcieOnly) {
  const std::string terms =
      "            - matchExpressions:\n"
      "              - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}\n"
      "            - matchExpressions:\n"
      "              - {key: nvidia.com/gpu.family, operator: In, values: [hopper]}\n";
  EXPECT_THAT(judge(vllm(requiredIn(terms))), IsEmpty());
  const std::string both =
      "            - matchExpressions:\n"
      "              - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}\n"
      "            - matchExpressions:\n"
      "              - {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [l40s]}\n";
  EXPECT_THAT(rulesHit(judge(vllm(requiredIn(both)))), ElementsAre("tensor-parallel-without-nvlink"));
}

TEST(TensorParallelWithoutNvlink, NotInAndPreferredDoNotRestrictTheModel) {
  const std::string notIn =
      "            - matchExpressions:\n"
      "              - {key: nvidia.com/gpu.product, operator: NotIn, values: [NVIDIA-H100-80GB-HBM3]}\n";
  EXPECT_THAT(judge(vllm(requiredIn(notIn))), IsEmpty());
  const std::string preferred =
      "      affinity:\n        nodeAffinity:\n          preferredDuringSchedulingIgnoredDuringExecution:\n"
      "          - weight: 1\n            preference:\n              matchExpressions:\n"
      "              - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}\n";
  EXPECT_THAT(judge(vllm(preferred)), IsEmpty());
}

TEST(TensorParallelWithoutNvlink, SglangAndTgiAreReportedWithTheirOwnAdvice) {
  const std::string sglang =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {cloud.google.com/gke-accelerator: "
      "nvidia-l4}\n  containers:\n  - name: s\n    image: lmsysorg/sglang:latest\n"
      "    command: [python3, -m, sglang.launch_server, --tp-size, \"2\"]\n";
  const auto s = judge(sglang);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_THAT(s[0].message(), HasSubstr("--tp-size 1 --pp-size 2"));
  const std::string tgi =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {cloud.google.com/gke-accelerator: "
      "nvidia-l4}\n  containers:\n  - name: t\n    image: ghcr.io/huggingface/text-generation-inference:2.4\n"
      "    args: [--num-shard=2]\n";
  const auto t = judge(tgi);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_THAT(t[0].message(), HasSubstr("TGI has no pipeline parallelism"));
}

TEST(TensorParallelWithoutNvlink, NonLiteralParallelismIsNotJudged) {
  EXPECT_THAT(judge(vllm(selector("cloud.google.com/gke-accelerator", "nvidia-l4"), "\"--tensor-parallel-size=$(TP)\"")),
              IsEmpty());
}

TEST(TensorParallelWithoutNvlink, IsOnByDefaultAsAWarning) {
  const auto mine = testing::only(judgeYaml(vllm(selector("cloud.google.com/gke-accelerator", "nvidia-l4"))),
                                  "tensor-parallel-without-nvlink");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].severity, Severity::Warning);
}


}  // namespace
}  // namespace gpuguard
