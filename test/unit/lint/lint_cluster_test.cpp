// gpuguard-lint --cluster: one list of each fact resource through the API
// (no watch), the files judged against it; exit 2 when the cluster cannot
// be reached or the kubeconfig is wrong, and say why.
#include <gtest/gtest.h>

#include "test/unit/cluster_fake_api_server.h"
#include "test/unit/lint/lint_test_support.h"
#include "test/unit/tls_test_support.h"

namespace gpuguard::lint_test {
namespace {

using nlohmann::json;
using testing::FakeApiServer;
using testing::tls::TempDir;

json gpuNode(const std::string& name, const std::string& driverMajor) {
  return {{"metadata",
           {{"name", name},
            {"labels", {{"nvidia.com/gpu.present", "true"}, {"nvidia.com/cuda.driver.major", driverMajor}}}}},
          {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}, {"capacity", {{"nvidia.com/gpu", "8"}}}}}};
}

std::string kubeconfigFor(const std::string& server) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
         "clusters: [{name: k, cluster: {server: '" + server + "'}}]\n"
         "users: [{name: u, user: {token: lint-token}}]\n";
}

class LintClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.setList("/api/v1/nodes", 200,
                 {{"items", {gpuNode("gpu-a", "550"), gpuNode("gpu-b", "570")}}, {"metadata", {{"resourceVersion", "9"}}}});
    api_.setList("/api/v1/namespaces", 200, {{"items", {{{"metadata", {{"name", "default"}}}}}}});
    for (const char* plural : {"deviceclasses", "resourceclaimtemplates", "resourceclaims", "resourceslices"}) {
      api_.setList(std::string("/apis/resource.k8s.io/v1/") + plural, 200, {{"items", json::array()}});
    }
    kubeconfig_ = dir_.write("kubeconfig", kubeconfigFor(api_.url()));
    pod_ = dir_.write("pod.yaml", kGoodPod);
  }

  FakeApiServer api_;
  TempDir dir_;
  std::string kubeconfig_, pod_;
};

TEST_F(LintClusterTest, ListsEveryFactResourceOnceWithTheKubeconfigsCredentialAndNeverWatches) {
  const RunResult r = runLint({"--cluster", "--kubeconfig", kubeconfig_, pod_});
  EXPECT_TRUE(r.exitCode == 0 || r.exitCode == 1) << r.err;
  EXPECT_EQ(r.err.find("--cluster: "), r.err.find("--cluster: note:")) << r.err;  // notes only, no error
  EXPECT_NE(r.err.find("gpuguard-lint: --cluster: note: nodepools.karpenter.sh: not served by the API server (judged as absent)"),
            std::string::npos)
      << r.err;
  std::vector<std::string> lists = api_.requests();
  EXPECT_EQ(lists, (std::vector<std::string>{
                       "/api/v1/nodes?limit=500 auth=Bearer lint-token",
                       "/api/v1/namespaces?limit=500 auth=Bearer lint-token",
                       "/apis/resource.k8s.io/v1/deviceclasses?limit=500 auth=Bearer lint-token",
                       "/apis/resource.k8s.io/v1/resourceclaimtemplates?limit=500 auth=Bearer lint-token",
                       "/apis/resource.k8s.io/v1/resourceclaims?limit=500 auth=Bearer lint-token",
                       "/apis/resource.k8s.io/v1/resourceslices?limit=500 auth=Bearer lint-token",
                       "/apis/karpenter.sh/v1/nodepools?limit=500 auth=Bearer lint-token",
                       "/apis/node.k8s.io/v1/runtimeclasses?limit=500 auth=Bearer lint-token",
                   }));
}

TEST_F(LintClusterTest, AResourceRbacRefusesIsAWarningAndTheFilesAreStillJudged) {
  api_.setList("/apis/resource.k8s.io/v1/resourceclaims", 403,
               {{"code", 403}, {"message", "resourceclaims.resource.k8s.io is forbidden: User \"dev\" cannot list"}});
  const RunResult r = runLint({"--cluster", "--kubeconfig", kubeconfig_, pod_});
  EXPECT_TRUE(r.exitCode == 0 || r.exitCode == 1) << r.err;
  EXPECT_NE(r.err.find("gpuguard-lint: --cluster: warning: resourceclaims.resource.k8s.io: resourceclaims.resource.k8s.io "
                       "is forbidden: User \"dev\" cannot list (judged without resourceclaims.resource.k8s.io)"),
            std::string::npos)
      << r.err;
}

TEST_F(LintClusterTest, AnUnreachableApiServerIsExit2AndSaysSo) {
  int port;
  {
    FakeApiServer gone;
    port = gone.port();
  }
  const std::string server = "http://127.0.0.1:" + std::to_string(port);
  const RunResult r = runLint({"--cluster", "--kubeconfig", dir_.write("down", kubeconfigFor(server)), pod_});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("gpuguard-lint: --cluster: cannot reach the API server " + server + " (kubeconfig " +
                       dir_.file("down") + ", context c): cannot connect to 127.0.0.1:" + std::to_string(port) +
                       ": Connection refused"),
            std::string::npos)
      << r.err;
}

TEST_F(LintClusterTest, AMalformedKubeconfigIsExit2NamingTheFileAndTheKey) {
  const std::string bad = dir_.write("bad", "current-context: c\ncontexts: [{name: c, context: {cluster: nope}}]\n");
  const RunResult r = runLint({"--cluster", "--kubeconfig", bad, pod_});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("gpuguard-lint: --cluster: " + bad + ": contexts[c].context.cluster: cluster \"nope\" not found"),
            std::string::npos)
      << r.err;
}

TEST_F(LintClusterTest, KubeconfigAndContextWithoutClusterAreBadUsage) {
  const RunResult r = runLint({"--kubeconfig", kubeconfig_, pod_});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--kubeconfig and --context go with --cluster"), std::string::npos) << r.err;
  EXPECT_TRUE(api_.requests().empty());
}

}  // namespace
}  // namespace gpuguard::lint_test
