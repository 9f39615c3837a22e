// gpu-nodepool-taint: a Karpenter NodePool that launches GPU nodes must taint
// them with the GPU taint, or any pod can land on the expensive nodes.
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

const Policy kPoolOnly = onlyRules({"gpu-nodepool-taint"});

const std::string kGpuTaint = "[{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]";

std::string nodePool(const std::string& requirements, const std::string& taints = "",
                     const std::string& apiVersion = "karpenter.sh/v1") {
  return "apiVersion: " + apiVersion +
         "\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n"
         "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
         "      requirements:\n" + requirements + (taints.empty() ? "" : "      taints: " + taints + "\n");
}

std::string requirement(const std::string& key, const std::string& op, const std::string& values = "") {
  return "      - {key: " + key + ", operator: " + op + (values.empty() ? "" : ", values: " + values) + "}\n";
}

std::vector<std::string> hits(const std::string& yaml, const Policy& policy = kPoolOnly) {
  return rulesHit(judgeYaml(yaml, policy));
}

TEST(GpuNodepoolTaint, AGpuFamilyWithoutTheTaintIsAWarning) {
  const auto f = judgeYaml(
      nodePool(requirement("karpenter.sh/capacity-type", "In", "[on-demand]") +
               requirement("karpenter.k8s.aws/instance-family", "In", "[g5, g6, g6e]")),
      kPoolOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "gpu-nodepool-taint");
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.template.spec.taints");
  EXPECT_THAT(f[0].message(), HasSubstr("launches GPU nodes (karpenter.k8s.aws/instance-family In [g5, g6, g6e])"));
  EXPECT_THAT(f[0].message(), HasSubstr("does not taint them nvidia.com/gpu:NoSchedule"));
  EXPECT_THAT(f[0].message(), HasSubstr("add {key: nvidia.com/gpu, effect: NoSchedule}"));
}

TEST(GpuNodepoolTaint, TheGpuTaintWithAnyValueIsEnough) {
  EXPECT_THAT(hits(nodePool(requirement("karpenter.k8s.aws/instance-family", "In", "[p5]"), kGpuTaint)), IsEmpty());
  EXPECT_THAT(hits(nodePool(requirement("karpenter.k8s.aws/instance-family", "In", "[p5]"),
                            "[{key: nvidia.com/gpu, effect: NoSchedule}]")),
              IsEmpty());
}

TEST(GpuNodepoolTaint, TheWrongEffectOrKeyDoesNotCount) {
  const std::string gpu = requirement("karpenter.k8s.aws/instance-family", "In", "[p4d]");
  EXPECT_THAT(hits(nodePool(gpu, "[{key: nvidia.com/gpu, effect: PreferNoSchedule}]")), ElementsAre("gpu-nodepool-taint"));
  EXPECT_THAT(hits(nodePool(gpu, "[{key: nvidia.com/GPU, effect: NoSchedule}]")), ElementsAre("gpu-nodepool-taint"));
  EXPECT_THAT(hits(nodePool(gpu, "[{key: dedicated, value: gpu, effect: NoSchedule}]")),
              ElementsAre("gpu-nodepool-taint"));
}

TEST(GpuNodepoolTaint, StartupTaintsDoNotCount) {
  const auto f = judgeYaml(nodePool(requirement("karpenter.k8s.aws/instance-family", "In", "[p4d]")) +
                               "      startupTaints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n",
                           kPoolOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("only among startupTaints"));
}

TEST(GpuNodepoolTaint, ThePolicysTaintIsRequired) {
  Policy valued = kPoolOnly;
  valued.gpuTaints = {{"nvidia.com/gpu", "present", "NoSchedule"}};
  const std::string gpu = requirement("karpenter.k8s.aws/instance-family", "In", "[g5]");
  EXPECT_THAT(hits(nodePool(gpu, kGpuTaint), valued), ElementsAre("gpu-nodepool-taint"));
  EXPECT_THAT(hits(nodePool(gpu, "[{key: nvidia.com/gpu, value: present, effect: NoSchedule}]"), valued), IsEmpty());
}

struct Selection {
  const char* key;
  const char* op;
  const char* values;
  bool gpu;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const Selection& c, std::ostream* os) { *os << c.key << " " << c.op << " " << c.values; }

class NodePoolRequirement : public ::testing::TestWithParam<Selection> {};

TEST_P(NodePoolRequirement, SelectsGpuNodesOrNot) {
  const Selection s = GetParam();
  const auto found = hits(nodePool(requirement(s.key, s.op, s.values)));
  if (s.gpu) EXPECT_THAT(found, ElementsAre("gpu-nodepool-taint")) << s.key << " " << s.op << " " << s.values;
  else EXPECT_THAT(found, IsEmpty()) << s.key << " " << s.op << " " << s.values;
}

INSTANTIATE_TEST_SUITE_P(
    Requirements, NodePoolRequirement,
    ::testing::Values(
        // AWS, Karpenter and EKS Auto Mode label domains
        Selection{"karpenter.k8s.aws/instance-family", "In", "[g4dn]", true},
        Selection{"karpenter.k8s.aws/instance-family", "In", "[m5, c5, p6-b200]", true},
        Selection{"eks.amazonaws.com/instance-family", "In", "[g6e]", true},
        Selection{"karpenter.k8s.aws/instance-family", "In", "[m5, c5]", false},
        Selection{"karpenter.k8s.aws/instance-family", "In", "[g4ad]", false},  // AMD Radeon
        Selection{"karpenter.k8s.aws/instance-family", "In", "[inf2, trn1]", false},  // Neuron
        Selection{"karpenter.k8s.aws/instance-family", "NotIn", "[g5]", false},
        Selection{"karpenter.k8s.aws/instance-category", "In", "[g]", true},
        Selection{"karpenter.k8s.aws/instance-category", "In", "[p]", true},
        Selection{"karpenter.k8s.aws/instance-category", "In", "[c, m, r]", false},
        Selection{"karpenter.k8s.aws/instance-gpu-count", "Gt", "[\"0\"]", true},
        Selection{"karpenter.k8s.aws/instance-gpu-count", "In", "[\"1\", \"8\"]", true},
        Selection{"karpenter.k8s.aws/instance-gpu-count", "In", "[\"0\"]", false},
        Selection{"karpenter.k8s.aws/instance-gpu-count", "Lt", "[\"1\"]", false},
        Selection{"eks.amazonaws.com/instance-gpu-count", "Exists", "", true},
        Selection{"karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", "", false},
        Selection{"karpenter.k8s.aws/instance-gpu-name", "In", "[a10g, l4]", true},
        Selection{"eks.amazonaws.com/instance-gpu-name", "Exists", "", true},
        Selection{"karpenter.k8s.aws/instance-gpu-manufacturer", "In", "[nvidia]", true},
        Selection{"eks.amazonaws.com/instance-gpu-manufacturer", "In", "[nvidia]", true},
        Selection{"karpenter.k8s.aws/instance-gpu-manufacturer", "In", "[amd]", false},
        Selection{"node.kubernetes.io/instance-type", "In", "[p5.48xlarge]", true},
        Selection{"node.kubernetes.io/instance-type", "In", "[m5.large, g5.xlarge]", true},
        Selection{"node.kubernetes.io/instance-type", "In", "[m5.large]", false},
        // Azure (AKS node auto-provisioning)
        Selection{"karpenter.azure.com/sku-gpu-count", "Gt", "[\"0\"]", true},
        Selection{"karpenter.azure.com/sku-gpu-name", "In", "[A100]", true},
        Selection{"karpenter.azure.com/sku-gpu-manufacturer", "In", "[nvidia]", true},
        Selection{"karpenter.azure.com/sku-family", "In", "[NC]", true},
        Selection{"karpenter.azure.com/sku-family", "In", "[D, E]", false},
        // Azure N-series sizes in node.kubernetes.io/instance-type (reference §15.6); AMD sizes are not NVIDIA's
        Selection{"node.kubernetes.io/instance-type", "In", "[Standard_ND96isr_H100_v5]", true},
        Selection{"node.kubernetes.io/instance-type", "In", "[Standard_NC24ads_A100_v4]", true},
        Selection{"node.kubernetes.io/instance-type", "In", "[Standard_D4s_v5]", false},
        Selection{"node.kubernetes.io/instance-type", "In", "[Standard_ND96isr_MI300X_v5]", false},
        Selection{"node.kubernetes.io/instance-type", "In", "[Standard_NV32as_v4]", false},
        // GCE machine families and GKE / GFD labels
        Selection{"node.kubernetes.io/instance-type", "In", "[a3-highgpu-8g]", true},
        Selection{"node.kubernetes.io/instance-type", "In", "[g2-standard-8]", true},
        Selection{"node.kubernetes.io/instance-type", "In", "[n2-standard-8]", false},
        Selection{"cloud.google.com/gke-accelerator", "Exists", "", true},
        Selection{"nvidia.com/gpu.present", "In", "[\"true\"]", true},
        Selection{"nvidia.com/gpu.present", "In", "[\"false\"]", false},
        // nothing GPU at all
        Selection{"kubernetes.io/arch", "In", "[amd64]", false},
        Selection{"karpenter.sh/capacity-type", "In", "[spot]", false}));

TEST(GpuNodepoolTaint, V1beta1NodePoolsAndV1alpha5ProvisionersAreChecked) {
  EXPECT_THAT(hits(nodePool(requirement("karpenter.k8s.aws/instance-family", "In", "[g5]"), "", "karpenter.sh/v1beta1")),
              ElementsAre("gpu-nodepool-taint"));
  const auto f = judgeYaml(R"(apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: gpu}
spec:
  requirements:
  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p3]}
)",
                           kPoolOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.taints");
  EXPECT_THAT(f[0].message(), HasSubstr("this Provisioner launches GPU nodes"));
}

TEST(GpuNodepoolTaint, OtherKindsAreIgnored) {
  EXPECT_THAT(hits(R"(apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  requirements:
  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}
)"),
              IsEmpty());
  EXPECT_THAT(hits(R"(apiVersion: example.com/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}
)"),
              IsEmpty());
}

TEST(GpuNodepoolTaint, ListItemsAreChecked) {
  const auto f = judgeYaml(R"(apiVersion: v1
kind: List
items:
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: gpu}
  spec:
    template:
      spec:
        requirements:
        - {key: karpenter.k8s.aws/instance-gpu-manufacturer, operator: In, values: [nvidia]}
)",
                           kPoolOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "items[0].spec.template.spec.taints");
}

}  // namespace
}  // namespace gpuguard
