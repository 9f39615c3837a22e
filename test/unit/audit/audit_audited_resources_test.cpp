// What the background audit lists and watches (audit/audited_resources.h):
// the kinds admission judges plus LimitRanges and NodePools, extra CRDs by
// flag, and the skip rule (an object a controller of an audited kind owns is
// judged through its owner).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "audit/audited_resources.h"

namespace gpuguard::audit {
namespace {

using nlohmann::json;

const AuditedResource* find(const std::vector<AuditedResource>& table, const std::string& name) {
  for (const AuditedResource& r : table) {
    if (r.name() == name) return &r;
  }
  return nullptr;
}

json ownedBy(const std::string& apiVersion, const std::string& kind, json controller = true) {
  return json{{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "ml"},
                            {"ownerReferences", json::array({{{"apiVersion", apiVersion}, {"kind", kind},
                                                             {"name", "owner"}, {"uid", "o-1"},
                                                             {"controller", controller}}})}}}};
}

TEST(AuditedResourcesTest, CoverTheWorkloadKindsAndTheObjectsRulesReadBesides) {
  const auto& table = auditedResources();
  for (const char* name : {"pods", "replicationcontrollers", "podtemplates", "limitranges", "deployments.apps",
                           "statefulsets.apps", "daemonsets.apps", "replicasets.apps", "jobs.batch", "cronjobs.batch",
                           "rayclusters.ray.io", "pytorchjobs.kubeflow.org", "trainjobs.trainer.kubeflow.org",
                           "jobsets.jobset.x-k8s.io", "inferenceservices.serving.kserve.io", "jobs.batch.volcano.sh",
                           "nimservices.apps.nvidia.com", "services.serving.knative.dev", "nodepools.karpenter.sh"}) {
    const AuditedResource* r = find(table, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_FALSE(r->kind.empty()) << name;
    EXPECT_FALSE(r->versions.empty()) << name;
  }
}

TEST(AuditedResourcesTest, ClusterWorkflowTemplatesAndNodePoolsAreClusterScoped) {
  const auto& table = auditedResources();
  EXPECT_FALSE(find(table, "clusterworkflowtemplates.argoproj.io")->namespaced);
  EXPECT_FALSE(find(table, "nodepools.karpenter.sh")->namespaced);
  EXPECT_TRUE(find(table, "workflows.argoproj.io")->namespaced);
  EXPECT_TRUE(find(table, "pods")->namespaced);
}

// Every resource the chart's webhook configuration sends to admission
// (gpuguard.webhookRules) is audited too: what admission would judge when it
// is created is judged when it already exists.
TEST(AuditedResourcesTest, IncludeEveryResourceOfTheChartsWebhookRules) {
  std::ifstream in(std::string(GPUGUARD_SOURCE_DIR) + "/manifests/chart/gpuguard/templates/_helpers.tpl");
  ASSERT_TRUE(in) << "the chart's _helpers.tpl";
  std::stringstream text;
  text << in.rdbuf();
  const std::string helpers = text.str();
  const std::size_t begin = helpers.find("define \"gpuguard.webhookRules\"");
  ASSERT_NE(begin, std::string::npos);
  const std::string rules = helpers.substr(begin, helpers.find("{{- end", begin) - begin);
  const std::regex rule(R"(apiGroups: \[([^\]]*)\][\s\S]*?resources: \[([^\]]*)\])");
  std::size_t checked = 0;
  for (auto it = std::sregex_iterator(rules.begin(), rules.end(), rule); it != std::sregex_iterator(); ++it) {
    std::string group = (*it)[1].str();
    if (group == "\"\"") group.clear();
    std::stringstream resources((*it)[2].str());
    for (std::string plural; std::getline(resources >> std::ws, plural, ',');) {
      const std::string name = group.empty() ? plural : plural + "." + group;
      EXPECT_NE(find(auditedResources(), name), nullptr) << name << " is admitted but not audited";
      ++checked;
    }
  }
  EXPECT_GE(checked, 30u);
}

TEST(AuditedResourcesTest, HaveNoDuplicates) {
  std::set<std::string> names;
  for (const AuditedResource& r : auditedResources()) EXPECT_TRUE(names.insert(r.name()).second) << r.name();
}

TEST(SkipRuleTest, APodOfAReplicaSetIsJudgedThroughItsOwner) {
  EXPECT_TRUE(controlledByAuditedOwner(ownedBy("apps/v1", "ReplicaSet"), auditedResources()));
}

TEST(SkipRuleTest, AReplicaSetOfADeploymentAndAJobOfACronJobAreSkipped) {
  EXPECT_TRUE(controlledByAuditedOwner(ownedBy("apps/v1", "Deployment"), auditedResources()));
  EXPECT_TRUE(controlledByAuditedOwner(ownedBy("batch/v1", "CronJob"), auditedResources()));
}

TEST(SkipRuleTest, PodsOfAuditedCustomResourcesAreSkipped) {
  EXPECT_TRUE(controlledByAuditedOwner(ownedBy("ray.io/v1", "RayCluster"), auditedResources()));
  EXPECT_TRUE(controlledByAuditedOwner(ownedBy("batch.volcano.sh/v1alpha1", "Job"), auditedResources()));
}

TEST(SkipRuleTest, PodsOfAControllerThatIsNotAuditedAreJudged) {
  EXPECT_FALSE(controlledByAuditedOwner(ownedBy("example.com/v1", "HomeGrownOperator"), auditedResources()));
  EXPECT_FALSE(controlledByAuditedOwner(ownedBy("v1", "Node"), auditedResources())) << "a mirror pod";
  EXPECT_FALSE(controlledByAuditedOwner(ownedBy("example.com/v1", "Job"), auditedResources()))
      << "the kind alone is not enough: the group must match";
}

TEST(SkipRuleTest, AnOwnerThatIsNotTheControllerDoesNotSkip) {
  EXPECT_FALSE(controlledByAuditedOwner(ownedBy("apps/v1", "ReplicaSet", false), auditedResources()));
  EXPECT_FALSE(controlledByAuditedOwner(ownedBy("apps/v1", "ReplicaSet", "true"), auditedResources()))
      << "controller must be the boolean true";
}

TEST(SkipRuleTest, MalformedOwnerReferencesJudgeTheObject) {
  for (const char* bad : {R"({"metadata": {"ownerReferences": "x"}})", R"({"metadata": {"ownerReferences": [1, null]}})",
                          R"({"metadata": 7})", R"([])", R"({"metadata": {"ownerReferences": [{"controller": true}]}})"}) {
    EXPECT_FALSE(controlledByAuditedOwner(json::parse(bad), auditedResources())) << bad;
  }
}

TEST(ExtraResourceTest, IsAPluralAndAGroup) {
  const std::optional<AuditedResource> r = parseExtraResource("trainers.example.com");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->plural, "trainers");
  EXPECT_EQ(r->group, "example.com");
  EXPECT_TRUE(r->kind.empty()) << "discovery names the kind";
  for (const char* bad : {"trainers", "Trainers.example.com", "trainers.", ".example.com", "trainers.example",
                          "trainers.exa_mple.com", "trainers.-example.com", ""}) {
    EXPECT_FALSE(parseExtraResource(bad)) << bad;
  }
}

TEST(ExtraResourceTest, AreAddedOnceAfterTheTable) {
  const std::vector<AuditedResource> all =
      withExtraResources({"trainers.example.com", "trainers.example.com", "rayclusters.ray.io"});
  EXPECT_EQ(all.size(), auditedResources().size() + 1);
  EXPECT_EQ(all.back().name(), "trainers.example.com");
  EXPECT_THROW(withExtraResources({"not a resource"}), std::invalid_argument);
}

TEST(ResolveServedTest, DiscoveryPicksTheVersionAndNamesAnExtraResourcesKind) {
  cluster::Discovery discovery;
  discovery.resources = {{"ray.io", "v1alpha1", "rayclusters", "RayCluster", true, {"get", "list", "watch"}},
                         {"example.com", "v2", "trainers", "Trainer", false, {"get", "list", "watch"}}};
  const std::vector<AuditedResource> resolved =
      resolveServed(withExtraResources({"trainers.example.com"}), discovery);
  const AuditedResource* ray = find(resolved, "rayclusters.ray.io");
  EXPECT_EQ(ray->versions, (std::vector<std::string>{"v1alpha1", "v1"})) << "the served one first, the table's after";
  const AuditedResource* trainers = find(resolved, "trainers.example.com");
  EXPECT_EQ(trainers->versions, std::vector<std::string>{"v2"});
  EXPECT_EQ(trainers->kind, "Trainer");
  EXPECT_FALSE(trainers->namespaced);
  EXPECT_EQ(find(resolved, "deployments.apps")->versions, std::vector<std::string>{"v1"}) << "not in discovery: as the table says";
}

TEST(ResolveServedTest, GroupsAreNamedOnce) {
  const std::vector<std::string> groups = groupsOf(auditedResources());
  EXPECT_EQ(std::count(groups.begin(), groups.end(), "kubeflow.org"), 1);
  EXPECT_EQ(groups.front(), "") << "core";
}

TEST(PrintAuditedResourcesTest, PrintsGroupPluralAndScopeALine) {
  const std::string printed = printAuditedResources(auditedResources());
  EXPECT_EQ(printed.rfind("core pods Namespaced\n", 0), 0u);
  EXPECT_NE(printed.find("\nkarpenter.sh nodepools Cluster\n"), std::string::npos);
  EXPECT_EQ(static_cast<std::size_t>(std::count(printed.begin(), printed.end(), '\n')), auditedResources().size());
}

TEST(AuditedObjectTest, ReadsTheReferenceAReportNames) {
  const AuditedObject o = auditedObject(json::parse(
      R"({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "vllm", "namespace": "ml", "uid": "u"}})"));
  EXPECT_EQ(o.apiVersion, "apps/v1");
  EXPECT_EQ(o.kind, "Deployment");
  EXPECT_EQ(o.ns, "ml");
  EXPECT_EQ(o.name, "vllm");
  EXPECT_EQ(o.uid, "u");
  const AuditedObject empty = auditedObject(json::parse(R"({"metadata": {"name": 5}})"));
  EXPECT_EQ(empty.name, "");
  EXPECT_EQ(auditedObject(json(3)).kind, "");
}

}  // namespace
}  // namespace gpuguard::audit
