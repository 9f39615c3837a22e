// POST /mutate: the same AdmissionReview as /validate, answered with the
// JSONPatch of the fixes of the rules the policy lists under `mutate:`.
#include <gtest/gtest.h>

#include "webhook/admission.h"
#include "yaml/policy_file.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;

const char* kGpuPodWithRequestsOnly = R"(apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers:
  - name: c
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      requests: {nvidia.com/gpu: 1}
)";

std::string reviewOf(const std::string& yaml, const std::string& operation = "CREATE") {
  const json object = yaml::parseStream(yaml).documents.at(0).value;
  json request = {{"uid", "u-1"},
                  {"kind", {{"group", ""}, {"version", "v1"}, {"kind", object.value("kind", "")}}},
                  {"namespace", "ml"},
                  {"operation", operation},
                  {"object", object}};
  return json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}}.dump();
}

std::string fromBase64(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0, value = 0;
  for (char c : text) {
    if (c == '=') break;
    value = value << 6 | static_cast<unsigned>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) out += static_cast<char>((value >> (bits -= 8)) & 0xFF);
  }
  return out;
}

struct MutateReply {
  json response;
  json patch;  // decoded; null when the reply has none
};

MutateReply mutateYaml(const std::string& yaml, const AdmissionPolicy& policy = {}) {
  const AdmissionResult r = mutate(reviewOf(yaml), policy);
  MutateReply reply{json::parse(r.body).at("response"), nullptr};
  if (reply.response.contains("patch")) reply.patch = json::parse(fromBase64(reply.response["patch"]));
  return reply;
}

TEST(Mutate, AGpuPodGetsItsTolerationAndItsLimitAndIsAllowed) {
  const MutateReply r = mutateYaml(kGpuPodWithRequestsOnly);
  EXPECT_TRUE(r.response.at("allowed").get<bool>());
  EXPECT_EQ(r.response.at("patchType"), "JSONPatch");
  const json object = yaml::parseStream(kGpuPodWithRequestsOnly).documents.at(0).value;
  const json patched = object.patch(r.patch);
  EXPECT_EQ(patched["spec"]["tolerations"],
            json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])"));
  EXPECT_EQ(patched["spec"]["containers"][0]["resources"],
            json::parse(R"({"limits": {"nvidia.com/gpu": 1}})"));  // requests default to limits
}

TEST(Mutate, ACompliantPodGetsNoPatch) {
  const MutateReply r = mutateYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: ok}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: c
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources: {limits: {nvidia.com/gpu: 1}}
)");
  EXPECT_TRUE(r.response.at("allowed").get<bool>());
  EXPECT_FALSE(r.response.contains("patch"));
  EXPECT_FALSE(r.response.contains("patchType"));
}

TEST(Mutate, OnlyTheRulesListedUnderMutateAreApplied) {
  AdmissionPolicy policy;
  policy.mutate = {"gpu-missing-toleration"};
  const MutateReply r = mutateYaml(kGpuPodWithRequestsOnly, policy);
  ASSERT_EQ(r.patch.size(), 1u);
  EXPECT_EQ(r.patch[0]["path"], "/spec/tolerations");
  policy.mutate.clear();
  EXPECT_FALSE(mutateYaml(kGpuPodWithRequestsOnly, policy).response.contains("patch"));
}

TEST(Mutate, ADeleteIsAllowedWithoutAPatch) {
  const AdmissionResult r = mutate(reviewOf(kGpuPodWithRequestsOnly, "DELETE"), AdmissionPolicy{});
  const json response = json::parse(r.body).at("response");
  EXPECT_TRUE(response.at("allowed").get<bool>());
  EXPECT_FALSE(response.contains("patch"));
  EXPECT_EQ(r.skipped, "DELETE");
}

TEST(Mutate, BadInputIsA400LikeValidate) {
  const AdmissionResult r = mutate("{not json", AdmissionPolicy{});
  EXPECT_EQ(r.httpStatus, 400);
  EXPECT_EQ(r.decision, Decision::Invalid);
}

TEST(Mutate, AnExemptNamespaceIsAllowedWithoutAPatch) {
  AdmissionPolicy policy;
  policy.exemptNamespaces = {"ml"};
  const AdmissionResult r = mutate(reviewOf(kGpuPodWithRequestsOnly), policy);
  EXPECT_FALSE(json::parse(r.body).at("response").contains("patch"));
  EXPECT_EQ(r.skipped, "namespace exempt");
}

TEST(Mutate, ASuppressionAnnotationCountsOnlyWhereThePolicyAllowsIt) {
  const std::string annotated = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {ignore.gpuguard.io/gpu-missing-toleration: "the nodes are not tainted"}
spec:
  containers:
  - name: c
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources: {limits: {nvidia.com/gpu: 1}}
)";
  // Anyone who can create a pod can write an annotation: by default it is ignored.
  EXPECT_EQ(mutateYaml(annotated).patch.size(), 1u);
  AdmissionPolicy trusting;
  trusting.allowSuppressions = true;
  EXPECT_FALSE(mutateYaml(annotated, trusting).response.contains("patch"));
}

TEST(Mutate, AMissingLimitIsTheRequestsValue) {
  const std::string mixed = R"(apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: c
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      requests: {cpu: "4", nvidia.com/gpu: "2"}
)";
  const json object = yaml::parseStream(mixed).documents.at(0).value;
  const json patched = object.patch(mutateYaml(mixed).patch);
  EXPECT_EQ(patched["spec"]["containers"][0]["resources"],
            json::parse(R"({"limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "4", "nvidia.com/gpu": "2"}})"));
}

TEST(PolicyMutateKey, ListsRuleIdsAndRejectsUnknownOnes) {
  EXPECT_EQ(AdmissionPolicy{}.mutate,
            (std::vector<std::string>{"gpu-missing-toleration", "gpu-requests-without-limits"}));
  EXPECT_EQ(AdmissionPolicy::from(yaml::parsePolicy("mutate: [gpu-missing-toleration]\n", "p.yaml")).mutate,
            std::vector<std::string>{"gpu-missing-toleration"});
  EXPECT_TRUE(AdmissionPolicy::from(yaml::parsePolicy("mutate: []\n", "p.yaml")).mutate.empty());
  EXPECT_THROW(yaml::parsePolicy("mutate: [gpu-typo]\n", "p.yaml"), PolicyError);
  EXPECT_THROW(yaml::parsePolicy("mutate: gpu-missing-toleration\n", "p.yaml"), PolicyError);
}

TEST(PolicyMutateKey, AnUnknownRuleIsNamedWithItsEntry) {
  try {
    yaml::parsePolicy("mutate: [gpu-missing-toleration, gpu-typo]\n", "p.yaml");
    FAIL() << "no PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "p.yaml: mutate[1]: unknown rule id \"gpu-typo\" (see gpuguard-lint --list-rules)");
  }
}

}  // namespace
}  // namespace gpuguard::webhook
