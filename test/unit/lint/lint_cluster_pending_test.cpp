// gpuguard-lint --cluster --pending [-n NS | -A]: the GPU pods Pending now in
// a live cluster, each replayed with the --nodes filters against the live
// nodes and the pods holding GPUs, kube-scheduler's PodScheduled message
// beside it and whether the two agree; exit 1 only when a pod can never
// schedule, 0 when it waits for GPUs others hold, 2 on trouble.
#include <gtest/gtest.h>

#include <algorithm>

#include "test/unit/cluster_fake_api_server.h"
#include "test/unit/lint/lint_test_support.h"
#include "test/unit/tls_test_support.h"

namespace gpuguard::lint_test {
namespace {

using nlohmann::json;
using testing::FakeApiServer;
using testing::tls::TempDir;

// One GPU each; gpu-a carries the GPU taint.
json gpuNode(const std::string& name, bool tainted) {
  json node = {{"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.present", "true"}}}}},
               {"spec", json::object()},
               {"status", {{"allocatable", {{"nvidia.com/gpu", "1"}}}, {"capacity", {{"nvidia.com/gpu", "1"}}}}}};
  if (tainted) node["spec"]["taints"] = {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}};
  return node;
}

json pod(const std::string& ns, const std::string& name, const std::string& gpus, const std::string& phase,
         const std::string& nodeName = "") {
  json p = {{"metadata", {{"namespace", ns}, {"name", name}}},
            {"spec",
             {{"containers",
               {{{"name", "main"}, {"image", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"},
                 {"resources", {{"limits", {{"nvidia.com/gpu", gpus}}}}}}}}}},
            {"status", {{"phase", phase}}}};
  if (!nodeName.empty()) p["spec"]["nodeName"] = nodeName;
  return p;
}

json unschedulable(json p, const std::string& message) {
  p["status"]["conditions"] = {{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
                                {"message", message}, {"lastTransitionTime", "2026-12-04T10:00:00Z"}}};
  return p;
}

json tolerating(json p) {
  p["spec"]["tolerations"] = {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  return p;
}

constexpr const char* kTaintAndHeld =
    "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint(s). preemption: 0/2 "
    "nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.";

std::string kubeconfigFor(const std::string& server, const std::string& contextNamespace = "ml") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "contexts: [{name: c, context: {cluster: k, user: u, namespace: " + contextNamespace + "}}]\n"
         "clusters: [{name: k, cluster: {server: '" + server + "'}}]\n"
         "users: [{name: u, user: {token: lint-token}}]\n";
}

class LintClusterPendingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.setList("/api/v1/nodes", 200, {{"items", {gpuNode("gpu-a", true), gpuNode("gpu-b", false)}}});
    api_.setList("/api/v1/namespaces", 200, {{"items", {{{"metadata", {{"name", "ml"}}}}, {{"metadata", {{"name", "other"}}}}}}});
    for (const char* plural : {"deviceclasses", "resourceclaimtemplates", "resourceclaims", "resourceslices"}) {
      api_.setList(std::string("/apis/resource.k8s.io/v1/") + plural, 200, {{"items", json::array()}});
    }
    kubeconfig_ = dir_.write("kubeconfig", kubeconfigFor(api_.url()));
  }
  void setPods(std::vector<json> pods) { api_.setList("/api/v1/pods", 200, {{"items", std::move(pods)}}); }
  RunResult pending(std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--cluster", "--pending", "--kubeconfig", kubeconfig_};
    args.insert(args.end(), more.begin(), more.end());
    return runLint(args);
  }

  FakeApiServer api_;
  TempDir dir_;
  std::string kubeconfig_;
  // gpu-b's only GPU is held; the untolerated pod waits for it.
  const json holder_ = pod("batch", "holder", "1", "Running", "gpu-b");
  const json waiting_ = unschedulable(pod("ml", "untolerated", "1", "Pending"), kTaintAndHeld);
};

TEST_F(LintClusterPendingTest, ExplainsAPendingGpuPodBesideKubeSchedulersMessageAndAgreesWithIt) {
  setPods({holder_, waiting_, pod("ml", "cpu-only", "0", "Pending")});
  const RunResult r = pending();
  EXPECT_EQ(r.exitCode, 0) << r.err << r.out;  // it only waits: an empty gpu-b would take it
  EXPECT_NE(r.out.find("Pod ml/untolerated (spec)\n  requests: nvidia.com/gpu 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  verdict: Pending: 0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had "
                       "untolerated taint(s).\n"),
            std::string::npos)
      << r.err << r.out;
  EXPECT_NE(r.out.find("  kube-scheduler: " + std::string(kTaintAndHeld) +
                       " (PodScheduled=False, Unschedulable, since 2026-12-04T10:00:00Z)\n  agreement: agrees with "
                       "kube-scheduler\n  waits: a node could take it once other pods free what they hold\n"),
            std::string::npos)
      << r.err << r.out;
  EXPECT_NE(r.out.find("held by 1 bound pod"), std::string::npos) << r.out;  // gpu-b's GPU, by batch/holder
  EXPECT_EQ(r.out.find("cpu-only"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n1 Pending GPU pod in namespace ml against 2 nodes: 0 never schedule, 1 waits; "
                       "kube-scheduler agrees on 1 of the 1 it has tried\n"),
            std::string::npos)
      << r.err << r.out;
}

TEST_F(LintClusterPendingTest, ListsTheFactsAndEveryUnfinishedPodOnceWithTheKubeconfigsCredential) {
  setPods({holder_, waiting_});
  pending();
  const std::vector<std::string> requests = api_.requests();
  // Discovery, the facts' kinds (ResourceSlices among them: a node a GPU
  // driver's slice names is a GPU node; RuntimeClasses), then the pods, once each.
  ASSERT_EQ(requests.size(), 9u);
  EXPECT_EQ(std::count_if(requests.begin(), requests.end(),
                          [](const std::string& r) { return r.find("/resourceslices?") != std::string::npos; }),
            1);
  EXPECT_EQ(requests.back(), "/api/v1/pods?fieldSelector=status.phase!=Succeeded,status.phase!=Failed&limit=500 "
                             "auth=Bearer lint-token");
}

TEST_F(LintClusterPendingTest, APodNoNodeCouldEverTakeIsExit1AndSaysSo) {
  // Four GPUs where every node has one: never, whatever else runs.
  setPods({holder_, waiting_, tolerating(pod("ml", "too-big", "4", "Pending"))});
  const RunResult r = pending();
  EXPECT_EQ(r.exitCode, 1) << r.err << r.out;
  const std::size_t big = r.out.find("Pod ml/too-big (spec)");
  ASSERT_NE(big, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  agreement: not yet tried by the scheduler (no PodScheduled condition)\n  never schedules: no "
                       "node could take it even with nothing else running, and no NodePool can launch one\n",
                       big),
            std::string::npos)
      << r.err << r.out;
  EXPECT_NE(r.out.find("[gpu-unschedulable]", big), std::string::npos) << r.out;  // the rule says what to change
  EXPECT_NE(r.out.find("2 Pending GPU pods in namespace ml against 2 nodes: 1 never schedules, 1 waits"),
            std::string::npos)
      << r.err << r.out;
}

TEST_F(LintClusterPendingTest, APodOnlyAKarpenterNodePoolCanTakeWaitsAndIsExit0) {
  // No node has 4 GPUs, but the NodePool launches nodes with 8 (and the pod tolerates its taint).
  api_.setList("/apis/karpenter.sh/v1/nodepools", 200,
               {{"items",
                 {{{"metadata", {{"name", "gpu-8"}}},
                   {"spec",
                    {{"template",
                      {{"spec",
                        {{"requirements",
                          {{{"key", "karpenter.k8s.aws/instance-gpu-count"}, {"operator", "In"}, {"values", {"8"}}}}},
                         {"taints", {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}}}}}}}}}}}}});
  setPods({holder_, tolerating(pod("ml", "four", "4", "Pending"))});
  const RunResult r = pending({"--format", "json"});
  EXPECT_EQ(r.exitCode, 0) << r.err << r.out;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["pods"].size(), 1u);
  EXPECT_EQ(doc["pods"][0]["schedulable"], false);      // no node of today takes it
  EXPECT_EQ(doc["pods"][0]["neverSchedules"], false);   // the pool can
  EXPECT_EQ(doc["neverSchedules"], false);
}

TEST_F(LintClusterPendingTest, ADifferentSchedulerMessageIsShownAsDisagreement) {
  setPods({holder_, unschedulable(pod("ml", "untolerated", "1", "Pending"),
                                  "0/2 nodes are available: 2 node(s) had untolerated taint(s). preemption: ...")});
  const RunResult r = pending();
  ASSERT_EQ(r.exitCode, 0) << r.err << r.out;  // it waits: an empty gpu-b would take it
  EXPECT_NE(r.out.find("  agreement: kube-scheduler says otherwise: \"0/2 nodes are available: 2 node(s) had "
                       "untolerated taint(s)\"\n"),
            std::string::npos)
      << r.err << r.out;
  EXPECT_NE(r.out.find("kube-scheduler agrees on 0 of the 1 it has tried"), std::string::npos) << r.out;
}

TEST_F(LintClusterPendingTest, JsonCarriesTheReplayTheSchedulersConditionAgreementAndFindings) {
  json owned = waiting_;
  owned["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "vllm-6d5f"},
                                           {"uid", "u1"}, {"controller", true}}};
  setPods({holder_, owned});
  const RunResult r = pending({"--format", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["namespace"], "ml");
  EXPECT_EQ(doc["neverSchedules"], false);
  EXPECT_EQ(doc["snapshot"]["boundPods"], 1);
  ASSERT_EQ(doc["pods"].size(), 1u);
  const json& p = doc["pods"][0];
  EXPECT_EQ(p["name"], "untolerated");
  EXPECT_EQ(p["verdict"], "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint(s).");
  EXPECT_EQ(p["scheduler"]["status"], "False");
  EXPECT_EQ(p["scheduler"]["reason"], "Unschedulable");
  EXPECT_EQ(p["scheduler"]["message"], kTaintAndHeld);
  EXPECT_EQ(p["agreesWithScheduler"], true);
  EXPECT_EQ(p["neverSchedules"], false);
  EXPECT_EQ(p["owner"], "ReplicaSet ml/vllm-6d5f");  // the ReplicaSet cannot be read: the direct owner
  ASSERT_TRUE(p["findings"].is_array());
}

TEST_F(LintClusterPendingTest, TheFixBelongsToTheDeploymentAboveTheReplicaSetOneGetPerOwner) {
  json first = waiting_, second = unschedulable(pod("ml", "untolerated-2", "1", "Pending"), kTaintAndHeld);
  for (json* p : {&first, &second}) {
    (*p)["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "vllm-6d5f"},
                                            {"uid", "u1"}, {"controller", true}}};
  }
  setPods({holder_, first, second});
  api_.putObject("/apis/apps/v1/namespaces/ml/replicasets/vllm-6d5f",
                 {{"metadata", {{"name", "vllm-6d5f"}, {"namespace", "ml"},
                                {"ownerReferences", {{{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "vllm"},
                                                      {"uid", "u0"}, {"controller", true}}}}}}});
  const RunResult r = pending();
  EXPECT_NE(r.out.find("  owned by Deployment ml/vllm (through ReplicaSet ml/vllm-6d5f): change the pod template there, "
                       "not the pod\n"),
            std::string::npos)
      << r.err << r.out;
  const std::vector<std::string> requests = api_.requests();
  EXPECT_EQ(std::count_if(requests.begin(), requests.end(),
                          [](const std::string& q) { return q.starts_with("/apis/apps/v1/namespaces/ml/replicasets/vllm-6d5f"); }),
            1);
}

TEST_F(LintClusterPendingTest, NamespaceFlagAndAllNamespacesChooseWhosePendingPodsAreExplained) {
  setPods({holder_, waiting_, unschedulable(pod("other", "elsewhere", "1", "Pending"), kTaintAndHeld)});
  const RunResult other = pending({"-n", "other"});
  EXPECT_NE(other.out.find("Pod other/elsewhere"), std::string::npos) << other.out;
  EXPECT_EQ(other.out.find("Pod ml/untolerated"), std::string::npos) << other.out;
  const RunResult all = pending({"-A"});
  EXPECT_NE(all.out.find("Pod other/elsewhere"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("Pod ml/untolerated"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("2 Pending GPU pods in all namespaces"), std::string::npos) << all.out;
  const RunResult none = pending({"--namespace=empty"});
  EXPECT_EQ(none.exitCode, 0);
  EXPECT_EQ(none.out, "No Pending GPU pods in namespace empty.\n");
}

TEST_F(LintClusterPendingTest, WithoutRightsOnEveryNamespacesPodsItJudgesTheNamespaceAgainstAllocatableAndWarns) {
  api_.setList("/api/v1/pods", 403, {{"code", 403}, {"message", "pods is forbidden: User \"dev\" cannot list pods at the cluster scope"}});
  api_.setList("/api/v1/namespaces/ml/pods", 200, {{"items", {waiting_}}});
  const RunResult r = pending();
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("gpuguard-lint: --pending: warning: cannot list the pods of all namespaces (pods is forbidden: "
                       "User \"dev\" cannot list pods at the cluster scope): the nodes' free GPUs are not known"),
            std::string::npos)
      << r.err;
  EXPECT_NE(api_.requests().back().find("/api/v1/namespaces/ml/pods?fieldSelector=status.phase=Pending"), std::string::npos);
  // Without the holder, gpu-b looks free: the replay fits it there and says the scheduler differs.
  EXPECT_NE(r.out.find("agreement: kube-scheduler says otherwise: the replay fits it on gpu-b"), std::string::npos) << r.out;

  const RunResult all = pending({"-A"});
  EXPECT_EQ(all.exitCode, 2);
  EXPECT_NE(all.err.find("gpuguard-lint: --pending: the list of pods (all namespaces) failed: HTTP 403: pods is forbidden"),
            std::string::npos)
      << all.err;
}

TEST_F(LintClusterPendingTest, BadUsageIsExit2WithTheReasonAndAsksTheClusterNothing) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--pending"}, "--pending asks the live cluster: add --cluster (for files, use --nodes FILE)"},
      {{"--cluster", "--pending", "pod.yaml"}, "--pending reads the Pending pods from the cluster, not from PATH (got pod.yaml)"},
      {{"--cluster", "--pending", "-n", "ml", "-A"}, "give --namespace or --all-namespaces, not both"},
      {{"--cluster", "-A", "pod.yaml"}, "--all-namespaces goes with --pending"},
      {{"--cluster", "--pending", "-n"}, "-n needs a value"},
      {{"--cluster", "--pending", "--format", "sarif=x.sarif"}, "--pending prints one report (--format text or json)"},
  };
  for (const auto& [args, message] : cases) {
    const RunResult r = runLint(args);
    EXPECT_EQ(r.exitCode, 2) << message;
    EXPECT_NE(r.err.find("gpuguard-lint: " + message + "\n"), std::string::npos) << r.err;
  }
  const RunResult sarif = pending({"--format", "sarif"});
  EXPECT_EQ(sarif.exitCode, 2);
  EXPECT_NE(sarif.err.find("gpuguard-lint: --pending prints text or json (--format)"), std::string::npos) << sarif.err;
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(LintClusterPendingTest, AnUnreachableClusterIsExit2) {
  int port;
  {
    FakeApiServer gone;
    port = gone.port();
  }
  const RunResult r = runLint({"--cluster", "--pending", "--kubeconfig",
                               dir_.write("down", kubeconfigFor("http://127.0.0.1:" + std::to_string(port)))});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("gpuguard-lint: --cluster: cannot reach the API server"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuguard::lint_test
