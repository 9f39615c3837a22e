// device-plugin-config: the NVIDIA device plugin DaemonSet must be able to
// register with the kubelet, start with valid settings and run on tainted GPU
// nodes (kubernetes-gpu-semantics.md §9.1, §9.2, §6.4). Also the engine's
// per-finding default severity: FAIL_ON_INIT_ERROR=false is a warning inside
// an error rule, unless the policy sets the rule's severity.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

// === The device plugin and the GPU node agents in DaemonSets ===========================

namespace gpuguard::device_plugin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kPluginOnly = onlyRules({"device-plugin-config"});

struct DaemonSet {
  std::string name = "nvidia-device-plugin-daemonset";
  std::string image = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0";
  std::string containerName = "nvidia-device-plugin-ctr";
  std::string tolerations = "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]";
  std::string extraContainerLines;  // e.g. "        env: [...]\n"
  std::string mounts = "[{name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}]";
  std::string volumes = "[{name: device-plugin, hostPath: {path: /var/lib/kubelet/device-plugins, type: Directory}}]";

  std::string yaml() const {
    return "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: " + name +
           ", namespace: kube-system}\nspec:\n  selector: {matchLabels: {name: ds}}\n  template:\n"
           "    metadata: {labels: {name: ds}}\n    spec:\n" +
           (tolerations.empty() ? "" : "      tolerations: " + tolerations + "\n") +
           "      priorityClassName: system-node-critical\n      containers:\n      - name: " + containerName +
           "\n        image: " + image + "\n" + extraContainerLines +
           (mounts.empty() ? "" : "        volumeMounts: " + mounts + "\n") +
           (volumes.empty() ? "" : "      volumes: " + volumes + "\n");
  }
};

std::vector<Finding> judge(const DaemonSet& ds, const Policy& policy = kPluginOnly) {
  return judgeYaml(ds.yaml(), policy);
}

DaemonSet withEnv(const std::string& name, const std::string& value) {
  DaemonSet ds;
  ds.extraContainerLines = "        env: [{name: " + name + ", value: \"" + value + "\"}]\n";
  return ds;
}

DaemonSet withArgs(const std::string& args) {
  DaemonSet ds;
  ds.extraContainerLines = "        args: " + args + "\n";
  return ds;
}

const std::string kContainer = "spec.template.spec.containers[0]";

// --- the static manifest of NVIDIA/k8s-device-plugin is clean -----------------

TEST(DevicePluginConfig, TheUpstreamStaticDaemonSetIsFine) {
  EXPECT_THAT(rulesHit(judge(DaemonSet{})), IsEmpty());
}

// --- the kubelet's device-plugin directory -------------------------------------

TEST(DevicePluginConfig, WithoutTheDevicePluginHostPathThePluginNeverRegisters) {
  DaemonSet ds;
  ds.mounts = "";
  ds.volumes = "";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), kContainer);
  EXPECT_THAT(f[0].message(), HasSubstr("does not mount the kubelet's device-plugin directory"));
  EXPECT_THAT(f[0].message(), HasSubstr("never registers"));
}

TEST(DevicePluginConfig, AVolumeThatIsNotMountedIsNamedInTheMessage) {
  DaemonSet ds;
  ds.mounts = "[{name: other, mountPath: /etc/other}]";
  ds.volumes = "[{name: device-plugin, hostPath: {path: /var/lib/kubelet/device-plugins}}, {name: other, emptyDir: {}}]";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), kContainer + ".volumeMounts");
  EXPECT_THAT(f[0].message(), HasSubstr("has the hostPath volume \"device-plugin\" but this container does not mount it"));
}

TEST(DevicePluginConfig, TheMountMustBeAHostPath) {
  DaemonSet ds;
  ds.volumes = "[{name: device-plugin, emptyDir: {}}]";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), kContainer + ".volumeMounts[0]");
  EXPECT_THAT(f[0].message(), HasSubstr("a hostPath volume"));
}

TEST(DevicePluginConfig, TheHostPathMustBeADevicePluginDirectory) {
  DaemonSet ds;
  ds.volumes = "[{name: device-plugin, hostPath: {path: /var/lib/kubelet/device-plugin}}]";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].value, "/var/lib/kubelet/device-plugin");
  EXPECT_THAT(f[0].message(), HasSubstr("is not the kubelet's device-plugin directory"));
}

TEST(DevicePluginConfig, ANonDefaultKubeletRootIsAccepted) {
  DaemonSet ds;
  ds.volumes = "[{name: device-plugin, hostPath: {path: /var/snap/microk8s/common/var/lib/kubelet/device-plugins/}}]";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

TEST(DevicePluginConfig, AHostPathMountOfAParentDirectoryIsAccepted) {
  DaemonSet ds;
  ds.mounts = "[{name: kubelet, mountPath: /var/lib/kubelet}]";
  ds.volumes = "[{name: kubelet, hostPath: {path: /var/lib/kubelet}}]";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

TEST(DevicePluginConfig, AMovedKubeletSocketMovesTheDirectory) {
  DaemonSet ds;
  ds.extraContainerLines = "        env: [{name: KUBELET_SOCKET, value: /dp/kubelet.sock}]\n";
  ds.mounts = "[{name: device-plugin, mountPath: /dp}]";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
  ds.mounts = "[{name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}]";
  EXPECT_THAT(rulesHit(judge(ds)), ElementsAre("device-plugin-config"));
}

// --- settings: env and flags --------------------------------------------------------

struct SettingCase {
  const char* env;
  const char* value;
  bool valid;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const SettingCase& c, std::ostream* os) { *os << c.env << "=" << c.value; }

class DevicePluginEnvSetting : public ::testing::TestWithParam<SettingCase> {};

TEST_P(DevicePluginEnvSetting, IsJudgedLikeThePlugin) {
  const SettingCase c = GetParam();
  const auto f = judge(withEnv(c.env, c.value));
  if (c.valid) {
    EXPECT_THAT(rulesHit(f), IsEmpty()) << c.env << "=" << c.value;
  } else {
    ASSERT_EQ(f.size(), 1u) << c.env << "=" << c.value;
    EXPECT_EQ(f[0].severity, Severity::Error);
    EXPECT_EQ(f[0].field(), kContainer + ".env[0].value");
    EXPECT_EQ(f[0].value, c.value);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllowedValues, DevicePluginEnvSetting,
    ::testing::Values(SettingCase{"MIG_STRATEGY", "none", true}, SettingCase{"MIG_STRATEGY", "single", true},
                      SettingCase{"MIG_STRATEGY", "mixed", true}, SettingCase{"MIG_STRATEGY", "Mixed", false},
                      SettingCase{"MIG_STRATEGY", "all", false}, SettingCase{"DEVICE_LIST_STRATEGY", "envvar", true},
                      SettingCase{"DEVICE_LIST_STRATEGY", "volume-mounts", true},
                      SettingCase{"DEVICE_LIST_STRATEGY", "cdi-annotations,cdi-cri", true},
                      SettingCase{"DEVICE_LIST_STRATEGY", "envvar, cdi-cri", true},
                      SettingCase{"DEVICE_LIST_STRATEGY", "cdi", false},
                      SettingCase{"DEVICE_LIST_STRATEGY", "envvar,volume-mount", false},
                      SettingCase{"DEVICE_LIST_STRATEGY", "envvar,", false},
                      SettingCase{"DEVICE_ID_STRATEGY", "uuid", true}, SettingCase{"DEVICE_ID_STRATEGY", "index", true},
                      SettingCase{"DEVICE_ID_STRATEGY", "UUID", false}, SettingCase{"DEVICE_ID_STRATEGY", "serial", false},
                      SettingCase{"FAIL_ON_INIT_ERROR", "true", true}, SettingCase{"FAIL_ON_INIT_ERROR", "1", true},
                      SettingCase{"FAIL_ON_INIT_ERROR", "yes", false}));

TEST(DevicePluginConfig, TheMessageQuotesThePluginsOwnError) {
  const auto f = judge(withEnv("MIG_STRATEGY", "Mixed"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("Unsupported value: \"Mixed\": supported values: \"none\", \"single\", \"mixed\""));
  EXPECT_THAT(f[0].message(), HasSubstr("unknown MIG strategy: Mixed"));
  const auto list = judge(withEnv("DEVICE_LIST_STRATEGY", "envvar,volume-mount"));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_THAT(list[0].message(), HasSubstr("invalid strategy: volume-mount"));
}

TEST(DevicePluginConfig, FlagsAreCheckedInBothSpellings) {
  const auto eq = judge(withArgs("[\"--mig-strategy=Mixed\"]"));
  ASSERT_EQ(eq.size(), 1u);
  EXPECT_EQ(eq[0].field(), kContainer + ".args[0]");
  const auto spaced = judge(withArgs("[\"--device-id-strategy\", \"serial\"]"));
  ASSERT_EQ(spaced.size(), 1u);
  EXPECT_EQ(spaced[0].field(), kContainer + ".args[1]");
  EXPECT_THAT(rulesHit(judge(withArgs("[\"-mig-strategy=mixed\", \"--device-list-strategy=cdi-cri\"]"))), IsEmpty());
}

TEST(DevicePluginConfig, FlagsInsideAShellCommandAreFound) {
  DaemonSet ds;
  ds.extraContainerLines = "        command: [sh, -c, \"nvidia-device-plugin --mig-strategy=both\"]\n";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), kContainer + ".command[2]");
}

TEST(DevicePluginConfig, AFlagOverridesTheEnvironment) {
  DaemonSet ds;
  ds.extraContainerLines =
      "        env: [{name: MIG_STRATEGY, value: bogus}]\n        args: [\"--mig-strategy=mixed\"]\n";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

TEST(DevicePluginConfig, ValuesFromElsewhereOrEmptyAreNotJudged) {
  DaemonSet ds;
  ds.extraContainerLines =
      "        env:\n        - name: MIG_STRATEGY\n          valueFrom: {configMapKeyRef: {name: c, key: k}}\n"
      "        - {name: DEVICE_ID_STRATEGY, value: \"\"}\n";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

// --- FAIL_ON_INIT_ERROR=false: a warning-worthy choice ------------------------------

TEST(DevicePluginConfig, FailOnInitErrorFalseIsAWarning) {
  const auto f = judge(withEnv("FAIL_ON_INIT_ERROR", "false"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "device-plugin-config");
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_FALSE(hasErrors(f));
  EXPECT_THAT(f[0].message(), HasSubstr("silently advertises no nvidia.com/gpu"));
  const auto flag = judge(withArgs("[\"--fail-on-init-error=false\"]"));
  ASSERT_EQ(flag.size(), 1u);
  EXPECT_EQ(flag[0].severity, Severity::Warning);
  EXPECT_THAT(rulesHit(judge(withArgs("[\"--fail-on-init-error\"]"))), IsEmpty());
}

TEST(DevicePluginConfig, ThePolicysSeverityForTheRuleAppliesToTheWarningToo) {
  Policy strict = kPluginOnly;
  strict.rules["device-plugin-config"] = RuleSetting::Error;
  const auto f = judge(withEnv("FAIL_ON_INIT_ERROR", "false"), strict);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);

  Policy lenient = kPluginOnly;
  lenient.rules["device-plugin-config"] = RuleSetting::Warning;
  const auto g = judge(withEnv("MIG_STRATEGY", "Mixed"), lenient);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].severity, Severity::Warning);
}

// --- tolerations ----------------------------------------------------------------------

TEST(DevicePluginConfig, ThePluginMustTolerateTheGpuTaint) {
  DaemonSet ds;
  ds.tolerations = "[{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.tolerations");
  EXPECT_THAT(f[0].message(), HasSubstr("does not tolerate the GPU node taint nvidia.com/gpu:NoSchedule"));
  ds.tolerations = "";
  EXPECT_THAT(rulesHit(judge(ds)), ElementsAre("device-plugin-config"));
}

TEST(DevicePluginConfig, TolerateEverythingIsEnough) {
  DaemonSet ds;
  ds.tolerations = "[{operator: Exists}]";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

TEST(DevicePluginConfig, ThePolicysTaintsAreUsed) {
  DaemonSet ds;
  ds.tolerations = "[{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]";
  Policy aks = kPluginOnly;
  aks.gpuTaints = {{"sku", "gpu", "NoSchedule"}};
  EXPECT_THAT(rulesHit(judge(ds, aks)), IsEmpty());
  aks.gpuTaints = {{"nvidia.com/gpu", std::nullopt, "PreferNoSchedule"}};
  EXPECT_THAT(rulesHit(judge(ds, aks)), IsEmpty());  // PreferNoSchedule keeps no pod off
}

// --- what is (not) the NVIDIA device plugin -------------------------------------------

TEST(DevicePluginConfig, TheGpuOperatorsDaemonSetIsRecognisedByName) {
  DaemonSet ds;
  ds.image = "\"FILLED BY THE OPERATOR\"";
  ds.containerName = "nvidia-device-plugin";
  ds.mounts = "";
  EXPECT_THAT(rulesHit(judge(ds)), ElementsAre("device-plugin-config"));
}

TEST(DevicePluginConfig, GpuFeatureDiscoveryFromThePluginImageIsNotThePlugin) {
  DaemonSet ds;
  ds.name = "gpu-feature-discovery";
  ds.containerName = "gpu-feature-discovery";
  ds.extraContainerLines = "        command: [\"/usr/bin/gpu-feature-discovery\"]\n"
                           "        env: [{name: MIG_STRATEGY, value: mixed}]\n";
  ds.mounts = "";
  ds.volumes = "";
  // Not the plugin (no device-plugin mount asked for), but a node agent that
  // must run on the GPU nodes all the same.
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
  ds.tolerations = "";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), ::testing::StartsWith("Required value: GPU Feature Discovery does not tolerate"));
}

TEST(DevicePluginConfig, TheConfigManagerSidecarIsNotThePlugin) {
  DaemonSet ds;
  ds.image = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0";
  ds.containerName = "config-manager";
  ds.extraContainerLines = "        command: [config-manager]\n";
  ds.mounts = "";
  ds.volumes = "";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

TEST(DevicePluginConfig, GkesOwnDevicePluginIsADifferentProgram) {
  DaemonSet ds;
  ds.name = "nvidia-gpu-device-plugin";
  ds.containerName = "nvidia-gpu-device-plugin";
  ds.image = "gcr.io/gke-release/nvidia-gpu-device-plugin@sha256:6b25281cd0fa3ca55f3e837a18be4a14b44952105568f466530dd85bcebde62f";
  ds.mounts = "[{name: device-plugin, mountPath: /device-plugin}]";
  ds.tolerations = "[{operator: Exists, effect: NoSchedule}]";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

TEST(DevicePluginConfig, AmdsPluginOfTheSameNameIsNotNvidias) {
  DaemonSet ds;
  ds.name = "amdgpu-device-plugin-daemonset";
  ds.containerName = "amdgpu-dp-cntr";
  ds.image = "rocm/k8s-device-plugin";
  ds.tolerations = "";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
}

TEST(DevicePluginConfig, AwssEfaPluginNamedLikeADevicePluginIsNotNvidias) {
  // aws-efa-k8s-device-plugin advertises vpc.amazonaws.com/efa: its image says so, whatever its names.
  DaemonSet ds;
  ds.name = "aws-efa-k8s-device-plugin-daemonset";
  ds.containerName = "aws-efa-k8s-device-plugin";
  ds.image = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.6";
  ds.tolerations = "[{key: CriticalAddonsOnly, operator: Exists}]";
  EXPECT_THAT(judge(ds), IsEmpty());
}

TEST(DevicePluginConfig, NvidiasImageUnderAnyNameIsThePlugin) {
  DaemonSet ds;
  ds.name = "gpu-agent";
  ds.containerName = "agent";
  ds.tolerations = "";
  const auto f = judge(ds);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("they advertise no nvidia.com/gpu"));
}

TEST(DevicePluginConfig, NamesDecideOnlyWhenTheImageIsLeftToBeFilledIn) {
  DaemonSet ds;
  ds.image = "example.com/other/device-plugin:v1";  // a real image, not NVIDIA's
  ds.mounts = "";
  EXPECT_THAT(judge(ds), IsEmpty());
  ds.image = "\"{{ .Values.image }}\"";  // a template: the name decides
  EXPECT_THAT(rulesHit(judge(ds)), ElementsAre("device-plugin-config"));
}

TEST(DevicePluginConfig, AMirrorOfNvidiasImageIsRecognised) {
  DaemonSet ds;
  ds.name = "gpu-plugin";
  ds.image = "registry.example.com/mirror/nvidia/k8s-device-plugin:v0.17.0";
  ds.tolerations = "";
  EXPECT_THAT(rulesHit(judge(ds)), ElementsAre("device-plugin-config"));
}

TEST(DevicePluginConfig, OtherDaemonSetsAndKindsAreIgnored) {
  DaemonSet ds;
  ds.name = "node-exporter";
  ds.containerName = "exporter";
  ds.image = "prom/node-exporter";
  ds.mounts = "";
  ds.volumes = "";
  ds.tolerations = "";
  EXPECT_THAT(rulesHit(judge(ds)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: nvidia-device-plugin}
spec:
  template:
    spec:
      containers: [{name: p, image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0}]
)",
                                 kPluginOnly)),
              IsEmpty());
}

// --- the other GPU node agents (GFD, MIG manager, DCGM exporter, DRA plugin) ----------

// A DaemonSet of one container running `image` (with an optional command).
std::string agentDaemonSet(const std::string& image, const std::string& tolerations, const std::string& command = "") {
  return "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {a: b}}\n"
         "  template:\n    metadata: {labels: {a: b}}\n    spec:\n" +
         (tolerations.empty() ? "" : "      tolerations: " + tolerations + "\n") + "      containers:\n      - name: c\n" +
         "        image: " + image + "\n" + (command.empty() ? "" : "        command: " + command + "\n");
}

TEST(GpuNodeAgents, EachAgentMustTolerateTheGpuTaintAndSaysWhatTheNodesLack) {
  const std::pair<const char*, const char*> agents[] = {
      {"nvcr.io/nvidia/gpu-feature-discovery:v0.8.2", "GPU Feature Discovery does not tolerate"},
      {"nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.1-ubuntu20.04", "the MIG manager does not tolerate"},
      {"nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless", "the DCGM exporter does not tolerate"},
      {"nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0", "the NVIDIA DRA driver's kubelet plugin does not tolerate"},
  };
  for (const auto& [image, words] : agents) {
    const auto f = judgeYaml(agentDaemonSet(image, ""), kPluginOnly);
    ASSERT_EQ(f.size(), 1u) << image;
    EXPECT_EQ(f[0].severity, Severity::Error);
    EXPECT_EQ(f[0].field(), "spec.template.spec.tolerations");
    EXPECT_THAT(f[0].message(), HasSubstr(std::string("Required value: ") + words +
                                        " the GPU node taint nvidia.com/gpu:NoSchedule, so it never runs on the "
                                        "tainted GPU nodes"));
    EXPECT_THAT(rulesHit(judgeYaml(agentDaemonSet(image, "[{key: nvidia.com/gpu, operator: Exists}]"), kPluginOnly)),
                IsEmpty())
        << image;
  }
}

TEST(GpuNodeAgents, GfdRunFromTheDevicePluginImageIsRecognisedByItsProgram) {
  const auto f = judgeYaml(agentDaemonSet("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "",
                                          "[\"/usr/bin/gpu-feature-discovery\"]"),
                           kPluginOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("GPU Feature Discovery does not tolerate"));
}

TEST(GpuNodeAgents, TheNearMissIsNamed) {
  const auto f = judgeYaml(agentDaemonSet("nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless",
                                          "[{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]"),
                           kPluginOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("the closest is spec.template.spec.tolerations[0]"));
  EXPECT_THAT(f[0].message(), HasSubstr("it tolerates the effect NoExecute, not NoSchedule"));
}

TEST(GpuNodeAgents, OtherDaemonSetsAreNotAgents) {
  EXPECT_THAT(rulesHit(judgeYaml(agentDaemonSet("fluent/fluent-bit:3.1", ""), kPluginOnly)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(agentDaemonSet("rocm/k8s-device-plugin:1.31", ""), kPluginOnly)), IsEmpty());
}

}  // namespace
}  // namespace gpuguard::device_plugin

// === Beyond DaemonSets: the GPU Operator's ClusterPolicy, sharing configs ==============

namespace gpuguard::gpu_operator {
namespace {

// device-plugin-config beyond DaemonSets: a GPU Operator ClusterPolicy whose
// daemonsets.tolerations replace every operand's and drop the GPU taint, and
// a device plugin sharing config with replicas below 2
// (kubernetes-gpu-semantics.md §9.5, §15.5).


using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kRule = onlyRules({"device-plugin-config"});

std::string clusterPolicy(const std::string& tolerations) {
  return "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cluster-policy}\nspec:\n  daemonsets:\n"
         "    tolerations: " + tolerations + "\n";
}

TEST(GpuOperatorConfig, ClusterPolicyTolerationsThatDropTheGpuTaintKeepEveryOperandOff) {
  const auto f = judgeYaml(clusterPolicy("[{key: CriticalAddonsOnly, operator: Exists}]"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("device-plugin-config"));
  EXPECT_EQ(f[0].field(), "spec.daemonsets.tolerations");
  EXPECT_THAT(f[0].message(), HasSubstr("replaces the tolerations of every GPU Operator operand DaemonSet"));
  EXPECT_THAT(f[0].message(), HasSubstr("add {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"));
}

TEST(GpuOperatorConfig, TheChartDefaultOrNoListIsFine) {
  EXPECT_THAT(judgeYaml(clusterPolicy("[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, "
                                      "{key: CriticalAddonsOnly, operator: Exists}]"),
                        kRule),
              IsEmpty());
  EXPECT_THAT(judgeYaml(clusterPolicy("[{operator: Exists}]"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(clusterPolicy("[]"), kRule), IsEmpty());
}

std::string sharingConfigMap(const std::string& replicas) {
  return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: time-slicing-config}\ndata:\n  any: |-\n    version: v1\n"
         "    sharing:\n      timeSlicing:\n        resources:\n        - name: nvidia.com/gpu\n          replicas: " +
         replicas + "\n";
}

TEST(GpuOperatorConfig, ASharingConfigWithOneReplicaFailsThePluginsConfigLoad) {
  const auto f = judgeYaml(sharingConfigMap("1"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("device-plugin-config"));
  EXPECT_EQ(f[0].field(), "data[any]");
  EXPECT_THAT(f[0].message(), HasSubstr("number of replicas must be >= 2"));
  EXPECT_THAT(judgeYaml(sharingConfigMap("4"), kRule), IsEmpty());
}

TEST(GpuOperatorConfig, OtherConfigMapsAreNotSharingConfigs) {
  const std::string other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata:\n"
                            "  app.yaml: |-\n    replicas: 1\n    timestamps: true\n";
  EXPECT_THAT(judgeYaml(other, kRule), IsEmpty());
}

}  // namespace
}  // namespace gpuguard::gpu_operator
