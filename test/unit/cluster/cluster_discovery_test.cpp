// Discovery: which resources the API server serves and in which version, read
// from /api/v1, /apis and /apis/GROUP/VERSION as the API server writes them.
#include <gtest/gtest.h>

#include "cluster/discovery.h"
#include "test/unit/cluster_fake_api_server.h"

namespace gpuguard::cluster {
namespace {

using nlohmann::json;
using testing::FakeApiServer;

json group(const std::string& name, std::vector<std::string> versions, const std::string& preferred) {
  json entry = {{"name", name}, {"versions", json::array()},
                {"preferredVersion", {{"groupVersion", name + "/" + preferred}, {"version", preferred}}}};
  for (const std::string& v : versions) entry["versions"].push_back({{"groupVersion", name + "/" + v}, {"version", v}});
  return entry;
}

json resource(const std::string& name, const std::string& kind, bool namespaced,
              std::vector<std::string> verbs = {"create", "delete", "get", "list", "patch", "update", "watch"}) {
  return {{"name", name}, {"singularName", ""}, {"namespaced", namespaced}, {"kind", kind}, {"verbs", verbs}};
}

json resourceList(const std::string& groupVersion, std::vector<json> resources) {
  return {{"kind", "APIResourceList"}, {"groupVersion", groupVersion}, {"resources", resources}};
}

ApiClient clientFor(const FakeApiServer& api) {
  ClientConfig config;
  config.server = api.url();
  parseServerUrl(config.server, config.url);
  return ApiClient(config);
}

// A cluster with the core group, apps, and ray.io serving RayCluster in v1
// (preferred) and RayService only in v1alpha1.
void serveCluster(FakeApiServer& api) {
  api.setList("/api/v1", 200, resourceList("v1", {resource("pods", "Pod", true), resource("pods/status", "Pod", true),
                                                 resource("nodes", "Node", false)}));
  api.setList("/apis", 200, {{"kind", "APIGroupList"},
                             {"groups", {group("apps", {"v1"}, "v1"), group("ray.io", {"v1", "v1alpha1"}, "v1")}}});
  api.setList("/apis/apps/v1", 200, resourceList("apps/v1", {resource("deployments", "Deployment", true),
                                                            resource("deployments/scale", "Scale", true)}));
  api.setList("/apis/ray.io/v1", 200, resourceList("ray.io/v1", {resource("rayclusters", "RayCluster", true)}));
  api.setList("/apis/ray.io/v1alpha1", 200,
              resourceList("ray.io/v1alpha1", {resource("rayclusters", "RayCluster", true),
                                               resource("rayservices", "RayService", true, {"get", "list"})}));
}

TEST(DiscoveryTest, EachResourceComesInThePreferredVersionOrElseTheFirstThatServesIt) {
  FakeApiServer api;
  serveCluster(api);
  ApiClient client = clientFor(api);
  const Discovery d = discover(client, {"", "apps", "ray.io", "karpenter.sh"});
  EXPECT_TRUE(d.errors.empty());
  ASSERT_NE(d.find("ray.io", "rayclusters"), nullptr);
  EXPECT_EQ(d.find("ray.io", "rayclusters")->version, "v1");
  ASSERT_NE(d.find("ray.io", "rayservices"), nullptr);
  EXPECT_EQ(d.find("ray.io", "rayservices")->version, "v1alpha1");
  EXPECT_FALSE(d.find("ray.io", "rayservices")->has("watch"));
  const ServedResource* deployments = d.find("apps", "deployments");
  ASSERT_NE(deployments, nullptr);
  EXPECT_EQ(deployments->kind, "Deployment");
  EXPECT_TRUE(deployments->namespaced);
  EXPECT_EQ(deployments->resource().path("v1", "ml"), "/apis/apps/v1/namespaces/ml/deployments");
  EXPECT_FALSE(d.find("", "nodes")->namespaced);
  EXPECT_EQ(d.find("", "pods/status"), nullptr);  // subresources are not resources
  EXPECT_EQ(d.find("apps", "deployments/scale"), nullptr);
  EXPECT_EQ(d.find("karpenter.sh", "nodepools"), nullptr);  // not served: absent, no error
  EXPECT_EQ(d.resources.size(), 5u);
}

TEST(DiscoveryTest, OnlyTheGroupsAskedForAreRead) {
  FakeApiServer api;
  serveCluster(api);
  ApiClient client = clientFor(api);
  const Discovery d = discover(client, {"apps"});
  EXPECT_EQ(d.resources.size(), 1u);
  EXPECT_EQ(api.requests(), (std::vector<std::string>{"/apis auth=", "/apis/apps/v1 auth="}));
  api.setList("/apis", 500, {{"kind", "Status"}, {"message", "etcd down"}});
  EXPECT_EQ(discover(client, {""}).resources.size(), 2u);  // the core group needs no /apis
}

TEST(DiscoveryTest, AGroupThatFailsIsAnErrorAndTheOthersStillCount) {
  FakeApiServer api;
  serveCluster(api);
  api.setList("/apis/ray.io/v1alpha1", 503, {{"kind", "Status"}, {"message", "the aggregated API is unavailable"}});
  ApiClient client = clientFor(api);
  const Discovery d = discover(client, {});
  EXPECT_EQ(d.errors, (std::map<std::string, std::string>{
                          {"ray.io", "GET /apis/ray.io/v1alpha1: the aggregated API is unavailable"}}));
  EXPECT_EQ(d.find("ray.io", "rayclusters"), nullptr);  // half a group would look like resources gone
  EXPECT_NE(d.find("apps", "deployments"), nullptr);
}

TEST(DiscoveryTest, WhenApisFailsEveryGroupAskedForSaysSo) {
  FakeApiServer api;
  serveCluster(api);
  api.setList("/apis", 403, {{"kind", "Status"}, {"message", "forbidden: User \"x\" cannot get path \"/apis\""}});
  ApiClient client = clientFor(api);
  const Discovery d = discover(client, {"", "apps"});
  EXPECT_EQ(d.errors.at("apps"), "GET /apis: forbidden: User \"x\" cannot get path \"/apis\"");
  EXPECT_EQ(d.errors.count(""), 0u);
  EXPECT_NE(d.find("", "pods"), nullptr);
  EXPECT_EQ(discover(client, {}).errors.at("*"), "GET /apis: forbidden: User \"x\" cannot get path \"/apis\"");
}

TEST(DiscoveryParseTest, MalformedDocumentsAreErrorsNamingWhatIsWrong) {
  EXPECT_THROW(parseGroupList(json::array()), std::runtime_error);
  try {
    parseGroupList({{"groups", {{{"name", "apps"}, {"versions", "v1"}}}}});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the APIGroup apps: \"versions\" is missing or not a list");
  }
  try {
    parseResourceList({{"resources", {{{"name", "pods"}}}}}, "", "v1");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the APIResourceList of v1 pods: \"kind\" is missing or not a string");
  }
  const std::vector<ServedResource> odd = parseResourceList(
      {{"resources", {{{"name", "widgets"}, {"kind", "Widget"}, {"namespaced", "yes"}, {"verbs", {"get", 7}}}}}},
      "example.com", "v1");
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_FALSE(odd[0].namespaced);  // not a boolean: read as cluster-scoped, never a throw
  EXPECT_EQ(odd[0].verbs, (std::vector<std::string>{"get"}));
}

TEST(DiscoveryParseTest, AGroupWithoutAPreferredVersionKeepsTheServersOrder) {
  const std::vector<GroupVersions> groups =
      parseGroupList({{"groups", {{{"name", "kubeflow.org"},
                                   {"versions", {{{"version", "v2beta1"}}, {{"version", "v1"}}}}}}}});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].versions, (std::vector<std::string>{"v2beta1", "v1"}));
}

}  // namespace
}  // namespace gpuguard::cluster
