// cuda-driver-too-old: the CUDA version a container needs (image tag, NGC
// release, NVIDIA_REQUIRE_CUDA / CUDA_VERSION env) against the lowest driver
// the pod's node selection admits, with the minor-version-compatibility floors
// of kubernetes-gpu-semantics.md §10.1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kCudaOnly = onlyRules({"cuda-driver-too-old"});

// A Pod with one container running `image`, the given pod-level scheduling
// block (nodeSelector/affinity, indented two spaces) and container env.
std::string pod(const std::string& image, const std::string& scheduling, const std::string& env = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + scheduling +
         "  containers:\n  - name: cuda\n    image: " + image + "\n" + env +
         "    resources:\n      limits:\n        nvidia.com/gpu: 1\n";
}

std::string driverMajor(const std::string& v) {
  return "  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"" + v + "\"\n";
}

std::string requiredAffinity(const std::string& terms) {
  return "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
         "        nodeSelectorTerms:\n" +
         terms;
}

std::vector<Finding> judge(const std::string& yaml) { return judgeYaml(yaml, kCudaOnly); }

// --- the floor: minor-version compatibility -----------------------------------

// CUDA 12.8, whose forward-compatibility branches no source records: the
// floor decides (cuda_forward_compat_test.cpp has the images that list theirs).
TEST(CudaDriverTooOld, Cuda12ImageOnAPinnedR470DriverIsAnError) {
  const auto f = judge(pod("nvidia/cuda:12.8.1-base-ubuntu22.04", driverMajor("470")));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "cuda-driver-too-old");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].image");
  EXPECT_EQ(f[0].value, "\"nvidia/cuda:12.8.1-base-ubuntu22.04\"");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"nvidia/cuda:12.8.1-base-ubuntu22.04\": CUDA 12.8.1 needs an "
                                      "NVIDIA driver >= 525.60.13"));
  EXPECT_THAT(f[0].message(), HasSubstr("admits driver 470 (nodeSelector nvidia.com/cuda.driver-version.major=470)"));
  EXPECT_THAT(f[0].message(), HasSubstr("nvidia.com/cuda.driver-version.major Gt \"524\""));
}

TEST(CudaDriverTooOld, Cuda12ImageOnTheFloorDriverIsFine) {
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", driverMajor("525"))), IsEmpty());
}

TEST(CudaDriverTooOld, Cuda12ImageOnAnOlderR535DriverIsFineUnderMinorVersionCompatibility) {
  // The 12.4 toolkit ships with 550, but 12.x runs on any driver >= 525.
  EXPECT_THAT(judge(pod("nvidia/cuda:12.8.1-devel-ubuntu22.04", driverMajor("535"))), IsEmpty());
}

TEST(CudaDriverTooOld, JustBelowTheCuda12FloorIsAnError) {
  EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:12.0.0-base-ubuntu22.04", driverMajor("520")))),
              ElementsAre("cuda-driver-too-old"));
}

TEST(CudaDriverTooOld, Cuda13NeedsR580) {
  EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:13.0.2-base-ubi8", driverMajor("575")))),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judge(pod("nvidia/cuda:13.0.2-base-ubi8", driverMajor("580"))), IsEmpty());
}

TEST(CudaDriverTooOld, Cuda11NeedsR450) {
  EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", driverMajor("440")))),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judge(pod("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", driverMajor("450"))), IsEmpty());
}

TEST(CudaDriverTooOld, Cuda10HasNoMinorVersionCompatibility) {
  // 10.2 needs 440.33; 10.1 needs 418.39.
  EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:10.2-base-ubuntu18.04", driverMajor("418")))),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judge(pod("nvidia/cuda:10.1-base-ubuntu18.04", driverMajor("418"))), IsEmpty());
}

TEST(CudaDriverTooOld, UnknownCudaFamiliesAreNotJudged) {
  EXPECT_THAT(judge(pod("nvidia/cuda:9.2-base-ubuntu18.04", driverMajor("100"))), IsEmpty());
}

// --- where the CUDA version comes from ----------------------------------------

struct ImageCase {
  const char* image;
  const char* cuda;  // in the message; "" when the image says nothing about CUDA
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const ImageCase& c, std::ostream* os) { *os << c.image; }

class CudaFromImage : public ::testing::TestWithParam<ImageCase> {};

TEST_P(CudaFromImage, IsReadFromTheReference) {
  const ImageCase c = GetParam();
  const auto f = judge(pod(c.image, driverMajor("470")));
  if (std::string(c.cuda).empty()) {
    EXPECT_THAT(f, IsEmpty()) << c.image;
    return;
  }
  ASSERT_EQ(f.size(), 1u) << c.image;
  EXPECT_THAT(f[0].message(), HasSubstr(c.cuda)) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    ImageTags, CudaFromImage,
    ::testing::Values(ImageCase{"nvidia/cuda:12.4.1-runtime-ubuntu22.04", "CUDA 12.4.1 needs"},
                      ImageCase{"docker.io/nvidia/cuda:12.8.1-devel-ubuntu22.04", "CUDA 12.8.1 needs"},
                      ImageCase{"nvcr.io/nvidia/cuda:12.2.0-base-ubi9", "CUDA 12.2.0 needs"},
                      ImageCase{"nvidia/cuda:12.3.2-base-ubuntu22.04@sha256:0123456789abcdef", "CUDA 12.3.2 needs"},
                      ImageCase{"pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime", "CUDA 12.1 needs"},
                      ImageCase{"pytorch/pytorch:2.7.0-cuda12.8-cudnn9-devel", "CUDA 12.8 needs"},
                      ImageCase{"nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04", "CUDA 12.5.0 needs"},
                      ImageCase{"nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", "CUDA 12.5.0 needs"},
                      ImageCase{"rapidsai/base:24.12-cuda12.5-py3.12", "CUDA 12.5 needs"},
                      // NGC frameworks: exact rows seen in release notes, and the certain major of the span.
                      ImageCase{"nvcr.io/nvidia/pytorch:24.05-py3", "CUDA 12.4.1 (NGC release 24.05)"},
                      ImageCase{"nvcr.io/nvidia/tritonserver:24.05-trtllm-python-py3", "CUDA 12.4.1 (NGC release 24.05)"},
                      ImageCase{"nvcr.io/nvidia/tensorflow:24.02-tf2-py3", "CUDA 12.x (NGC release 24.02)"},
                      ImageCase{"nvcr.io/nvidia/pytorch:23.10-py3", "CUDA 12.x (NGC release 23.10)"},
                      ImageCase{"nvcr.io/nvidia/pytorch:25.06-py3", "CUDA 12.x (NGC release 25.06)"},
                      ImageCase{"nvcr.io/nvidia/sglang:25.10-py3", "CUDA 13.0.2 (NGC release 25.10)"},
                      ImageCase{"nvcr.io/nvidia/pytorch:26.01-py3", "CUDA 13.x (NGC release 26.01)"},
                      // Not read: releases whose CUDA major is not certain, other tags, no tag.
                      ImageCase{"nvcr.io/nvidia/pytorch:25.08-py3", ""},
                      ImageCase{"nvcr.io/nvidia/pytorch:23.05-py3", ""},
                      ImageCase{"nvcr.io/nvidia/nemo:24.05", ""},
                      ImageCase{"vllm/vllm-openai:v0.8.5", ""},
                      ImageCase{"rayproject/ray:2.9.0-py310-cu121", ""},
                      ImageCase{"nvidia/cuda", ""},
                      ImageCase{"nvidia/cuda:latest", ""},
                      ImageCase{"myregistry.example.com:5000/team/app", ""},
                      ImageCase{"example.com/barracuda12.1:v1", ""},
                      ImageCase{"example.com/app:barracuda12.1", ""}));

// --- NVIDIA_REQUIRE_* as the NVIDIA container runtime evaluates it -------------

std::string requireEnv(const std::string& value, const std::string& name = "NVIDIA_REQUIRE_CUDA") {
  return "    env:\n    - name: " + name + "\n      value: \"" + value + "\"\n";
}

TEST(CudaDriverTooOld, ARequirementAlternativeForThePinnedBranchAdmitsAnOlderDriver) {
  // Forward compatibility: the branch clause holds on 470 (with a tesla GPU,
  // which no label rules out), so the runtime starts the container.
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", driverMajor("470"),
                        requireEnv("cuda>=12.4 brand=tesla,driver>=470,driver<471"))),
              IsEmpty());
  EXPECT_THAT(judge(pod("nvidia/cuda:13.0.2-base-ubuntu24.04", driverMajor("535"),
                        requireEnv("cuda>=13.0 brand=tesla,driver>=535,driver<536 brand=tesla,driver>=550,driver<551"))),
              IsEmpty());
}

TEST(CudaDriverTooOld, ADriverNoAlternativeAdmitsIsReportedWithEachAlternativesFailingClause) {
  const auto f = judge(pod("busybox", driverMajor("545"), requireEnv("cuda>=12.4 brand=tesla,driver>=535,driver<536")));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].env[0].value");
  EXPECT_EQ(f[0].value, "\"cuda>=12.4 brand=tesla,driver>=535,driver<536\"");
  EXPECT_THAT(f[0].message(), HasSubstr("on driver 545 (nodeSelector nvidia.com/cuda.driver-version.major=545) none "
                                      "does: cuda>=12.4 fails on cuda>=12.4 (branch 545 supports CUDA 12.3); "
                                      "brand=tesla,driver>=535,driver<536 fails on driver<536"));
  EXPECT_THAT(f[0].message(), HasSubstr("\"requirement error: unsatisfied condition: cuda>=12.4\""));
  EXPECT_THAT(f[0].message(), HasSubstr("from branch 550: nvidia.com/cuda.driver-version.major Gt \"549\""));
}

TEST(CudaDriverTooOld, TheRuntimeCheckIsStricterThanMinorVersionCompatibility) {
  // 12.4 code runs on 535 (>= 525), but cuda>=12.4 compares the driver's own
  // CUDA version (12.2 on 535), and no alternative admits 535.
  EXPECT_THAT(rulesHit(judge(pod("busybox", driverMajor("535"), requireEnv("cuda>=12.4")))),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judge(pod("busybox", driverMajor("550"), requireEnv("cuda>=12.4"))), IsEmpty());
}

TEST(CudaDriverTooOld, EveryDriverARangeAdmitsIsTried) {
  // Gt 534 admits 535 (an alternative holds) and 545 (none holds).
  const auto f = judge(pod("busybox",
                           requiredAffinity("        - matchExpressions:\n"
                                            "          - {key: nvidia.com/cuda.driver-version.major, operator: Gt, "
                                            "values: [\"534\"]}\n"),
                           requireEnv("cuda>=12.4 brand=tesla,driver>=535,driver<536")));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("on driver 545"));
}

TEST(CudaDriverTooOld, RuntimeVersionLabelsNameTheBranchForARequirement) {
  EXPECT_THAT(rulesHit(judge(pod("busybox", "  nodeSelector:\n    nvidia.com/cuda.runtime-version.full: \"12.2\"\n",
                                 requireEnv("cuda>=12.4")))),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judge(pod("busybox", "  nodeSelector:\n    nvidia.com/cuda.runtime-version.full: \"12.4\"\n",
                        requireEnv("cuda>=12.4"))),
              IsEmpty());
}

TEST(CudaDriverTooOld, AFullDriverVersionIsComparedWithTheClausesExactly) {
  const std::string full = "  nodeSelector:\n    nvidia.com/cuda.driver-version.full: \"535.54.03\"\n";
  EXPECT_THAT(rulesHit(judge(pod("busybox", full, requireEnv("driver>=535.86")))), ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judge(pod("busybox", full, requireEnv("driver>=535.54"))), IsEmpty());
  // A major-only pin of 535 may be 535.86 or newer: not certain to fail.
  EXPECT_THAT(judge(pod("busybox", driverMajor("535"), requireEnv("driver>=535.86"))), IsEmpty());
}

TEST(CudaDriverTooOld, EveryNvidiaRequireVariableMustHold) {
  EXPECT_THAT(rulesHit(judge(pod("busybox", driverMajor("550"), requireEnv("driver>=570", "NVIDIA_REQUIRE_DRIVER")))),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judge(pod("busybox", driverMajor("550"), requireEnv("driver>=570", "NVIDIA_REQUIRE_JETPACK"))), IsEmpty());
}

TEST(CudaDriverTooOld, ClausesTheRuntimeSkipsOrCannotDecideReportNothing) {
  // brand and arch depend on the GPU; an unknown property is skipped; a
  // clause without an operator makes the runtime fail in a way we cannot name.
  for (const char* value : {"brand=tesla", "arch>=7.5", "foo>=1", "cuda", "  "}) {
    EXPECT_THAT(judge(pod("busybox", driverMajor("470"), requireEnv(value))), IsEmpty()) << value;
  }
  // A skipped clause leaves the rest of its alternative, and an alternative
  // with nothing left is dropped, not counted as true.
  for (const char* value : {"foo>=1,cuda>=12.0", "foo>=1 cuda>=12.0"}) {
    EXPECT_THAT(rulesHit(judge(pod("busybox", driverMajor("470"), requireEnv(value)))),
                ElementsAre("cuda-driver-too-old"))
        << value;
  }
}

TEST(CudaDriverTooOld, DisableRequireSwitchesTheRuntimeCheckOffAndTheFloorApplies) {
  const std::string env = requireEnv("cuda>=12.4") + "    - name: NVIDIA_DISABLE_REQUIRE\n      value: \"true\"\n";
  EXPECT_THAT(judge(pod("busybox", driverMajor("535"), env)), IsEmpty());  // 535 >= 525: 12.4 runs
  const auto f = judge(pod("busybox", driverMajor("470"), env));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("CUDA 12.4 (NVIDIA_REQUIRE_CUDA) needs an NVIDIA driver >= 525.60.13"));
}

TEST(CudaDriverTooOld, ARequirementWithoutADriverBoundIsNotJudged) {
  EXPECT_THAT(judge(pod("busybox", "", requireEnv("cuda>=12.4"))), IsEmpty());
}

// --- CUDA 13 on GPUs below compute capability 7.5 ------------------------------

TEST(CudaDriverTooOld, Cuda13OnlyOnVoltaGpusIsAWarning) {
  const auto f = judge(pod("nvidia/cuda:13.0.2-base-ubuntu24.04",
                           "  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"580\"\n"
                           "    nvidia.com/gpu.product: Tesla-V100-SXM2-16GB\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.containers[0].image");
  EXPECT_THAT(f[0].message(), HasSubstr("CUDA 13.0.2 has no code for GPUs below compute capability 7.5"));
  EXPECT_THAT(f[0].message(), HasSubstr("(nodeSelector nvidia.com/gpu.product=Tesla-V100-SXM2-16GB)"));
}

TEST(CudaDriverTooOld, PreTuringGpusAreReadFromEveryLabelThatNamesThem) {
  for (const std::string selector :
       {"nvidia.com/gpu.family: pascal", "nvidia.com/gpu.compute.major: \"6\"", "nvidia.com/gpu.product: Tesla-P4",
        "cloud.google.com/gke-accelerator: nvidia-tesla-v100", "karpenter.k8s.aws/instance-gpu-name: v100",
        "node.kubernetes.io/instance-type: p3.2xlarge"}) {
    EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:13.0.2-base-ubuntu24.04", "  nodeSelector:\n    " + selector + "\n"))),
                ElementsAre("cuda-driver-too-old"))
        << selector;
  }
}

TEST(CudaDriverTooOld, TuringAndNewerOrAMixOfGpusAreFineForCuda13) {
  for (const std::string selector :
       {"nvidia.com/gpu.family: turing", "nvidia.com/gpu.compute.major: \"7\"", "nvidia.com/gpu.product: Tesla-T4",
        "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "node.kubernetes.io/instance-type: p4d.24xlarge"}) {
    EXPECT_THAT(judge(pod("nvidia/cuda:13.0.2-base-ubuntu24.04", "  nodeSelector:\n    " + selector + "\n")),
                IsEmpty())
        << selector;
  }
  const std::string mix = requiredAffinity(
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/gpu.family, operator: In, values: [volta, ampere]}\n");
  EXPECT_THAT(judge(pod("nvidia/cuda:13.0.2-base-ubuntu24.04", mix)), IsEmpty());
}

TEST(CudaDriverTooOld, Cuda12OnVoltaIsFine) {
  EXPECT_THAT(judge(pod("nvidia/cuda:12.9.1-base-ubuntu24.04", "  nodeSelector:\n    nvidia.com/gpu.family: volta\n")),
              IsEmpty());
}

TEST(CudaDriverTooOld, CudaVersionEnvIsRead) {
  const std::string env = "    env:\n    - name: CUDA_VERSION\n      value: \"12.2.2\"\n";
  const auto f = judge(pod("example.com/team/trainer:v3", driverMajor("470"), env));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].env[0].value");
  EXPECT_THAT(f[0].message(), HasSubstr("CUDA 12.2.2 (CUDA_VERSION)"));
}

TEST(CudaDriverTooOld, NvidiaRequireCudaWinsOverCudaVersionAndTheFirstCudaVersionCounts) {
  const std::string versions =
      "    env:\n    - {name: HOME, value: /root}\n    - {name: CUDA_VERSION, value: \"12.2.2\"}\n"
      "    - {name: CUDA_VERSION, value: \"11.8\"}\n";
  const auto first = judge(pod("example.com/team/trainer:v3", driverMajor("470"), versions));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].field(), "spec.containers[0].env[1].value");
  EXPECT_THAT(first[0].message(), HasSubstr("CUDA 12.2.2 (CUDA_VERSION)"));

  // NVIDIA_REQUIRE_CUDA's version wins wherever it stands: CUDA 13 on Pascal (CUDA_VERSION's 12.2.2 would be fine).
  const auto required = judge(pod("example.com/team/trainer:v3", "  nodeSelector:\n    nvidia.com/gpu.family: pascal\n",
                                  versions + "    - {name: NVIDIA_REQUIRE_CUDA, value: \"cuda>=13.0\"}\n"));
  ASSERT_EQ(required.size(), 1u);
  EXPECT_EQ(required[0].field(), "spec.containers[0].env[3].value");
  EXPECT_THAT(required[0].message(), HasSubstr("NVIDIA_REQUIRE_CUDA"));
}

TEST(CudaDriverTooOld, EnvFromAnotherSourceOrWithoutAVersionIsIgnored) {
  const std::string env =
      "    env:\n    - name: CUDA_VERSION\n      valueFrom: {configMapKeyRef: {name: c, key: v}}\n"
      "    - name: NVIDIA_REQUIRE_CUDA\n      value: \"brand=tesla,driver>=470\"\n";
  // Neither gives a CUDA version, and the requirement holds on 470.
  EXPECT_THAT(judge(pod("busybox", driverMajor("470"), env)), IsEmpty());
}

// --- which drivers the node selection admits ----------------------------------

TEST(CudaDriverTooOld, NoDriverConstraintMeansNoFinding) {
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", "")), IsEmpty());
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                        "  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n")),
              IsEmpty());
}

TEST(CudaDriverTooOld, DeprecatedDriverMajorLabelIsRead) {
  EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                                 "  nodeSelector:\n    nvidia.com/cuda.driver.major: \"470\"\n"))),
              ElementsAre("cuda-driver-too-old"));
}

TEST(CudaDriverTooOld, FullDriverVersionIsComparedExactly) {
  const auto old = judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                             "  nodeSelector:\n    nvidia.com/cuda.driver-version.full: \"525.53.01\"\n"));
  ASSERT_EQ(old.size(), 1u);
  EXPECT_THAT(old[0].message(), HasSubstr("admits driver 525.53.01"));
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                        "  nodeSelector:\n    nvidia.com/cuda.driver-version.full: \"525.60.13\"\n")),
              IsEmpty());
}

TEST(CudaDriverTooOld, AMajorOnlyPinOnTheFloorBranchIsNotReported) {
  // Driver 525 admits 525.60.13 and newer releases of the branch, and the
  // label does not say which: the reading that avoids false alarms.
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", driverMajor("525"))), IsEmpty());
}

TEST(CudaDriverTooOld, AffinityInAdmitsItsSmallestValue) {
  const std::string affinity = requiredAffinity(
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"550\", \"470\"]}\n");
  const auto f = judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", affinity));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("admits driver 470 (required node affinity nodeSelectorTerms[0]: "
                                      "nvidia.com/cuda.driver-version.major In [550, 470])"));
}

// A pod whose required node affinity says driver major Gt `n`.
std::string withDriverGt(const std::string& image, const std::string& n) {
  return pod(image, requiredAffinity("        - matchExpressions:\n"
                                     "          - {key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"" +
                                     n + "\"]}\n"));
}

TEST(CudaDriverTooOld, AffinityGtAdmitsTheNextRealDriverBranch) {
  const std::string cuda12 = "nvidia/cuda:12.4.1-base-ubuntu22.04";
  EXPECT_THAT(rulesHit(judge(withDriverGt(cuda12, "519"))), ElementsAre("cuda-driver-too-old"));  // admits 520
  EXPECT_THAT(judge(withDriverGt(cuda12, "520")), IsEmpty());  // no driver 521-524 exists: admits 525
  EXPECT_THAT(judge(withDriverGt(cuda12, "524")), IsEmpty());
}

TEST(CudaDriverTooOld, GtOnTheBranchBelowTheFloorIsTheNaturalWayToAskForIt) {
  // After 575 comes 580 (reference §10.2): Gt 575 is "580 or later", which CUDA 13 needs.
  EXPECT_THAT(judge(withDriverGt("nvidia/cuda:13.0.0-base-ubuntu24.04", "575")), IsEmpty());
}

TEST(CudaDriverTooOld, ATooLowGtNamesTheRealBranchItAdmits) {
  const auto f = judge(withDriverGt("nvidia/cuda:13.0.0-base-ubuntu24.04", "570"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("admits driver 575 (required node affinity"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("571")));
}

TEST(CudaDriverTooOld, GtAboveTheNewestKnownBranchAdmitsTheNextInteger) {
  // Branches newer than the table are unknown: 596 may be one, and it is new enough.
  EXPECT_THAT(judge(withDriverGt("nvidia/cuda:13.0.0-base-ubuntu24.04", "595")), IsEmpty());
}

TEST(CudaDriverTooOld, ANegativeGtAdmitsTheOldestBranch) {
  const auto f = judge(withDriverGt("nvidia/cuda:12.4.1-base-ubuntu22.04", "-5"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("admits driver 410"));
}

TEST(CudaDriverTooOld, GtAtTheInt64LimitAdmitsNoNode) {
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                        requiredAffinity("        - matchExpressions:\n"
                                         "          - {key: nvidia.com/cuda.driver-version.major, operator: Gt, "
                                         "values: [\"9223372036854775807\"]}\n"))),
              IsEmpty());
}

TEST(CudaDriverTooOld, AffinityLtAloneDoesNotBoundTheDriverFromBelow) {
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                        requiredAffinity("        - matchExpressions:\n"
                                         "          - {key: nvidia.com/cuda.driver-version.major, operator: Lt, "
                                         "values: [\"600\"]}\n"))),
              IsEmpty());
}

TEST(CudaDriverTooOld, OredTermsTakeTheLowestDriverOverTerms) {
  const std::string terms =
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"550\"]}\n"
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"470\"]}\n";
  const auto f = judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", requiredAffinity(terms)));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("nodeSelectorTerms[1]"));
}

TEST(CudaDriverTooOld, ATermWithoutADriverConstraintMakesTheDriverUnknown) {
  const std::string terms =
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"470\"]}\n"
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}\n";
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", requiredAffinity(terms))), IsEmpty());
}

TEST(CudaDriverTooOld, NodeSelectorAppliesToEveryTerm) {
  const std::string scheduling =
      driverMajor("470") + requiredAffinity("        - matchExpressions:\n"
                                            "          - {key: nvidia.com/gpu.product, operator: Exists}\n");
  EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", scheduling))),
              ElementsAre("cuda-driver-too-old"));
}

TEST(CudaDriverTooOld, AnAndedGtRaisesTheLowestInValue) {
  const std::string terms =
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"470\", \"550\"]}\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"500\"]}\n";
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", requiredAffinity(terms))), IsEmpty());
}

TEST(CudaDriverTooOld, ATermThatMatchesNoNodeIsIgnored) {
  // Gt on .full never matches (node-affinity-gt-lt reports it), so only the
  // second term places the pod.
  const std::string terms =
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.full, operator: Gt, values: [\"470.1\"]}\n"
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"550\"]}\n";
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", requiredAffinity(terms))), IsEmpty());
}

TEST(CudaDriverTooOld, PreferredAffinityDoesNotRestrictTheNodes) {
  const std::string preferred =
      "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
      "      - weight: 1\n        preference:\n          matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"470\"]}\n";
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", preferred)), IsEmpty());
}

// --- runtime-version: the newest CUDA the driver supports ---------------------

TEST(CudaDriverTooOld, RuntimeVersionOfAnOlderMajorIsAnError) {
  const auto f = judge(pod("nvidia/cuda:13.0.2-base-ubi8",
                           "  nodeSelector:\n    nvidia.com/cuda.runtime-version.major: \"12\"\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("admits nodes whose driver supports CUDA 12.x at most"));
}

TEST(CudaDriverTooOld, RuntimeVersionFullOfAnOlderMajorIsAnError) {
  EXPECT_THAT(rulesHit(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                                 "  nodeSelector:\n    nvidia.com/cuda.runtime-version.full: \"11.8\"\n"))),
              ElementsAre("cuda-driver-too-old"));
}

TEST(CudaDriverTooOld, RuntimeVersionOfTheSameMajorIsFineUnderMinorVersionCompatibility) {
  // CUDA 12.4 on a driver that reports 12.2 (R535): 535 >= 525.
  EXPECT_THAT(judge(pod("nvidia/cuda:12.4.1-base-ubuntu22.04",
                        "  nodeSelector:\n    nvidia.com/cuda.runtime-version.full: \"12.2\"\n")),
              IsEmpty());
}

TEST(CudaDriverTooOld, ADriverPinThatSufficesSettlesATermWhateverTheRuntimeLabelSays) {
  const std::string scheduling =
      "  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"580\"\n"
      "    nvidia.com/cuda.runtime-version.major: \"12\"\n";
  EXPECT_THAT(judge(pod("nvidia/cuda:13.0.2-base-ubi8", scheduling)), IsEmpty());
}

// --- every pod and container --------------------------------------------------

TEST(CudaDriverTooOld, WorkloadTemplatesAndEveryContainerAreChecked) {
  const std::string yaml =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
      "      nodeSelector: {nvidia.com/cuda.driver-version.major: \"470\"}\n"
      "      initContainers:\n      - {name: init, image: \"nvidia/cuda:12.1.0-base-ubuntu22.04\"}\n"
      "      containers:\n      - {name: app, image: \"nvidia/cuda:11.8.0-base-ubuntu22.04\"}\n"
      "      - {name: side, image: \"pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\"}\n";
  const auto f = judge(yaml);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.initContainers[0].image");
  EXPECT_EQ(f[1].field(), "spec.template.spec.containers[1].image");
}

TEST(CudaDriverTooOld, IsOnByDefaultAsAnError) {
  const auto f = judgeYaml(pod("nvidia/cuda:12.4.1-base-ubuntu22.04", driverMajor("470")));
  EXPECT_THAT(testing::only(f, "cuda-driver-too-old"), ::testing::SizeIs(1));
}


TEST(CudaDriverTooOld, AContainerWithoutAnImageIsJudgedOnlyByItsEnv) {
  // A Spark executor pod template or an operator's pod spec: whoever runs
  // it fills the image in, so no CUDA version is known from it.
  const std::string noImage = "apiVersion: v1\nkind: Pod\nspec:\n" + driverMajor("470") +
                              "  containers:\n  - name: executor\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
  EXPECT_THAT(rulesHit(judgeYaml(noImage, kCudaOnly)), IsEmpty());
  // What the container states still holds: the runtime checks its
  // NVIDIA_REQUIRE_CUDA against the driver whatever the image.
  const std::string required = noImage + "    env: [{name: NVIDIA_REQUIRE_CUDA, value: \"cuda>=12.4\"}]\n";
  EXPECT_THAT(rulesHit(judgeYaml(required, kCudaOnly)), ElementsAre("cuda-driver-too-old"));
}

}  // namespace
}  // namespace gpuguard
