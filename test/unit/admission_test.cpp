// The webhook's admission decision, as a pure function: AdmissionReview bytes
// in, reply bytes and HTTP status out. Read top to bottom, this is the
// specification of what gpuguard-webhook answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lint/lint_file.h"
#include "rules/engine.h"
#include "test_support.h"
#include "webhook/admission.h"
#include "webhook/json_text.h"
#include "yaml/policy_file.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using gpuguard::testing::onlyRules;

// ---------------------------------------------------------------------------
// Helpers: a review around an object, and the reply taken apart.
// ---------------------------------------------------------------------------

json objectFromYaml(const std::string& text) {
  yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error || parsed.documents.size() != 1) throw std::runtime_error("test YAML must be one document");
  return parsed.documents.front().value;
}

struct Request {
  std::string operation = "CREATE";
  std::string apiVersion = "admission.k8s.io/v1";
  std::string namespaceName = "ml";
  std::string subResource;
  bool dryRun = false;
  json oldObject = nullptr;
  std::string uid = "705ab4f5-6393-11e8-b7cc-42010a800002";
};

// An AdmissionReview shaped like kube-apiserver's (field order included).
std::string reviewBody(const json& object, const Request& rq = {}) {
  std::string group, version = "v1", kind;
  const json& source = object.is_object() ? object : rq.oldObject;
  if (source.is_object()) {
    const std::string apiVersion = source.value("apiVersion", "v1");
    const std::size_t slash = apiVersion.find('/');
    if (slash != std::string::npos) group = apiVersion.substr(0, slash), version = apiVersion.substr(slash + 1);
    else version = apiVersion;
    kind = source.value("kind", "");
  }
  json gvk = {{"group", group}, {"version", version}, {"kind", kind}};
  json request = json::object();
  request["uid"] = rq.uid;
  request["kind"] = gvk;
  request["resource"] = {{"group", group}, {"version", version}, {"resource", "things"}};
  request["requestKind"] = gvk;
  if (!rq.subResource.empty()) request["subResource"] = rq.subResource;
  if (source.is_object() && source.contains("metadata")) request["name"] = source["metadata"].value("name", "");
  request["namespace"] = rq.namespaceName;
  request["operation"] = rq.operation;
  request["userInfo"] = {{"username", "alice"}, {"groups", {"system:authenticated"}}};
  request["object"] = object;
  request["oldObject"] = rq.oldObject;
  request["dryRun"] = rq.dryRun;
  request["options"] = {{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}};
  return json{{"kind", "AdmissionReview"}, {"apiVersion", rq.apiVersion}, {"request", request}}.dump();
}

struct Reply {
  AdmissionResult result;
  json body;

  const json& response() const { return body.at("response"); }
  bool allowed() const { return response().at("allowed").get<bool>(); }
  std::string message() const { return response().at("status").at("message").get<std::string>(); }
  std::vector<std::string> warnings() const {
    return response().contains("warnings") ? response()["warnings"].get<std::vector<std::string>>()
                                           : std::vector<std::string>{};
  }
  std::vector<std::string> rules(bool denied) const {
    std::vector<std::string> out;
    for (const RuleHit& h : result.hits) {
      if (h.denied == denied) out.push_back(h.rule);
    }
    return out;
  }
};

Reply reviewRaw(const std::string& body, const AdmissionPolicy& policy = {}) {
  Reply r{review(body, policy), json()};
  r.body = json::parse(r.result.body);  // every reply, even an error, is JSON
  return r;
}

Reply admit(const std::string& yaml, const AdmissionPolicy& policy = {}, const Request& rq = {}) {
  return reviewRaw(reviewBody(objectFromYaml(yaml), rq), policy);
}

template <typename P, typename Change>
P with(P p, Change change) {
  change(p);
  return p;
}

// A GPU Pod with everything right: toleration, driver pin, whole GPUs.
const char* const kGoodPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: "1"}
      requests: {nvidia.com/gpu: "1"}
)";

// The same Pod without toleration and driver pin.
const char* const kBarePod = R"(
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: "1"}
      requests: {nvidia.com/gpu: "1"}
)";

// The denial message the engine's findings should produce, built directly.
std::string expectedDenial(const std::string& yaml, const Policy& policy) {
  std::vector<std::string> entries;
  for (const Finding& f : judge(objectFromYaml(yaml), policy)) {
    if (f.severity == Severity::Error && !f.suppressed) entries.push_back(denialEntry(f));
  }
  return denialMessage(entries, AdmissionLimits{});
}

// ---------------------------------------------------------------------------
// The envelope: what every reply looks like.
// ---------------------------------------------------------------------------

TEST(AdmissionEnvelope, AnswersInTheVersionItCameInAndEchoesTheUid) {
  const Reply r = admit(kGoodPod);
  EXPECT_EQ(r.result.httpStatus, 200);
  EXPECT_EQ(r.body["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(r.body["kind"], "AdmissionReview");
  EXPECT_EQ(r.response()["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_TRUE(r.allowed());
  EXPECT_EQ(r.result.decision, Decision::Allowed);
  EXPECT_FALSE(r.body.contains("request")) << "the request is not echoed back";
}

TEST(AdmissionEnvelope, V1beta1IsAnsweredAsV1beta1) {
  Request rq;
  rq.apiVersion = "admission.k8s.io/v1beta1";
  const Reply allowed = admit(kGoodPod, AdmissionPolicy{}, rq);
  EXPECT_EQ(allowed.body["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_TRUE(allowed.allowed());

  const Reply denied = admit(kBarePod, AdmissionPolicy{}, rq);
  EXPECT_EQ(denied.body["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(denied.response()["uid"], rq.uid);
  EXPECT_FALSE(denied.allowed());
  EXPECT_EQ(denied.response()["status"]["code"], 403);
}

TEST(AdmissionEnvelope, NeverCarriesAPatch) {
  for (const char* yaml : {kGoodPod, kBarePod}) {
    const Reply r = admit(yaml);
    EXPECT_FALSE(r.response().contains("patch"));
    EXPECT_FALSE(r.response().contains("patchType"));
  }
}

TEST(AdmissionEnvelope, TheUidIsEchoedExactlyWhateverItHolds) {
  Request rq;
  rq.uid = "quote\" backslash\\ newline\n unicode \xC3\xA9";
  const Reply r = admit(kGoodPod, AdmissionPolicy{}, rq);
  EXPECT_EQ(r.response()["uid"], rq.uid);
}

// ---------------------------------------------------------------------------
// Denials: every error finding, in the API server's field-error style.
// ---------------------------------------------------------------------------

TEST(AdmissionDenial, IsA403ForbiddenWithEveryErrorInTheMessage) {
  const Reply r = admit(kBarePod);
  EXPECT_EQ(r.result.httpStatus, 200) << "a denial is a normal reply; the status is inside";
  EXPECT_FALSE(r.allowed());
  EXPECT_EQ(r.result.decision, Decision::Denied);
  const json& status = r.response()["status"];
  EXPECT_EQ(status["code"], 403);
  EXPECT_EQ(status["reason"], "Forbidden");
  EXPECT_EQ(status["status"], "Failure");
  EXPECT_EQ(r.message(), expectedDenial(kBarePod, Policy{}));
  EXPECT_THAT(r.rules(true), AllOf(Contains("gpu-missing-toleration"), Contains("gpu-missing-driver-pin")));
}

TEST(AdmissionDenial, SeveralErrorsAreJoinedLikeTheApiServersAggregate) {
  const Reply r = admit(kBarePod, AdmissionPolicy{onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin"})});
  EXPECT_THAT(r.message(), StartsWith("[spec.tolerations: Required value: no toleration for the GPU node taint"));
  EXPECT_THAT(r.message(), HasSubstr("[gpu-missing-toleration], spec.nodeSelector: Required value: "));
  EXPECT_THAT(r.message(), EndsWith("[gpu-missing-driver-pin]]"));
}

TEST(AdmissionDenial, ASingleErrorHasNoBrackets) {
  const Reply r = admit(kBarePod, AdmissionPolicy{onlyRules({"gpu-missing-toleration"})});
  EXPECT_THAT(r.message(), StartsWith("spec.tolerations: Required value: no toleration for the GPU node taint "
                                      "nvidia.com/gpu"));
  EXPECT_THAT(r.message(), EndsWith(" [gpu-missing-toleration]"));
}

// One test per rule: the object that breaks it, the field and the words the
// user sees after `admission webhook "..." denied the request: `.
struct RuleCase {
  const char* rule;
  const char* yaml;
  const char* expectedStart;  // "<field>: <message start>"
  const char* expectedPart;   // a phrase further on
};
// GoogleTest (and so ctest) names the case by its rule, not by its bytes.
void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.rule; }

const RuleCase kRuleCases[] = {
    {"gpu-invalid-quantity", R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  workerGroupSpecs:
  - groupName: gpu
    template:
      spec:
        containers:
        - name: w
          resources:
            limits: {nvidia.com/gpu: "1 GPU"}
)",
     "spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"1 GPU\"",
     "write a whole number of nvidia.com/gpu"},
    {"gpu-fractional", R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          limits: {nvidia.com/gpu: "500m"}
)",
     "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer",
     "is counted in whole units"},
    {"gpu-requests-limits-mismatch", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pj}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            resources:
              requests: {nvidia.com/gpu: "2"}
              limits: {nvidia.com/gpu: "1"}
)",
     "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.requests: Invalid value: \"2\": must be "
     "equal to nvidia.com/gpu limit of 1",
     "extended resources cannot be overcommitted"},
    {"gpu-requests-without-limits", R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          requests: {nvidia.com/gpu: "1"}
)",
     "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
     "resources",
     "set limits.nvidia.com/gpu"},
    {"gpu-missing-toleration", kBarePod,
     "spec.tolerations: Required value: no toleration for the GPU node taint nvidia.com/gpu",
     "operator: Exists, effect: NoSchedule"},
    {"gpu-missing-driver-pin", kBarePod,
     "spec.nodeSelector: Required value: no nodeSelector or required node affinity on a CUDA driver label",
     "CUDA driver version is insufficient"},
    {"label-value-not-string", R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  workerGroupSpecs:
  - groupName: gpu
    template:
      spec:
        nodeSelector: {nvidia.com/cuda.driver-version.major: 535}
        containers:
        - name: w
)",
     "spec.workerGroupSpecs[0].template.spec.nodeSelector[nvidia.com/cuda.driver-version.major]: Invalid value: 535: "
     "must be a string",
     "write \"535\""},
};

class EveryRuleDenies : public ::testing::TestWithParam<RuleCase> {};

TEST_P(EveryRuleDenies, WithItsFieldItsMessageAndItsId) {
  const RuleCase& c = GetParam();
  const AdmissionPolicy policy = AdmissionPolicy{onlyRules({c.rule})};
  const Reply r = admit(c.yaml, policy);
  ASSERT_FALSE(r.allowed()) << c.rule;
  EXPECT_THAT(r.message(), StartsWith(c.expectedStart));
  EXPECT_THAT(r.message(), HasSubstr(c.expectedPart));
  EXPECT_THAT(r.message(), EndsWith(std::string(" [") + c.rule + "]"));
  EXPECT_EQ(r.message(), expectedDenial(c.yaml, policy.engine));
  EXPECT_THAT(r.rules(true), ElementsAre(c.rule));
}

INSTANTIATE_TEST_SUITE_P(Rules, EveryRuleDenies, ::testing::ValuesIn(kRuleCases),
                         [](const auto& info) {
                           std::string name = info.param.rule;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(AdmissionDenial, EveryRegisteredRuleHasADenialCaseHereOrIsNewerThanThisTest) {
  // The seven rules above are the engine's first. Rules added later are
  // denied through the same path (the parity tests below run them all).
  std::vector<std::string> covered;
  for (const RuleCase& c : kRuleCases) covered.emplace_back(c.rule);
  for (const char* id : {"gpu-invalid-quantity", "gpu-fractional", "gpu-requests-limits-mismatch",
                         "gpu-requests-without-limits", "gpu-missing-toleration", "gpu-missing-driver-pin",
                         "label-value-not-string"}) {
    EXPECT_NE(findRule(id), nullptr) << id << " is no longer registered";
    EXPECT_THAT(covered, Contains(id));
  }
}

// A Deployment whose `count` containers each ask for a fractional GPU
// (0.1 ... 0.9): one gpu-fractional finding per container.
std::string deploymentWithFractionalContainers(int count) {
  std::string yaml = R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
)";
  for (int i = 0; i < count; ++i) {
    yaml += "      - name: c" + std::to_string(i) + "\n        resources:\n          limits: {nvidia.com/gpu: \"0." +
            std::to_string(i % 9 + 1) + "\"}\n";
  }
  return yaml;
}

TEST(AdmissionDenial, AVeryLongListIsCappedWithAndNMore) {
  const std::string yaml = deploymentWithFractionalContainers(60);
  const Reply r = admit(yaml, AdmissionPolicy{onlyRules({"gpu-fractional"})});
  ASSERT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), StartsWith("[spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: "));
  EXPECT_THAT(r.message(), HasSubstr(" more]"));
  EXPECT_LE(runeCount(r.message()), AdmissionLimits{}.maxDenialMessageRunes);
  EXPECT_THAT(r.rules(true), SizeIs(60)) << "metrics and logs still see every finding";
}

TEST(AdmissionDenial, MessageHelpersDeduplicateAndCap) {
  AdmissionLimits limits;
  EXPECT_EQ(denialMessage({"a: x [r]"}, limits), "a: x [r]");
  EXPECT_EQ(denialMessage({"a: x [r]", "b: y [r]"}, limits), "[a: x [r], b: y [r]]");
  EXPECT_EQ(denialMessage({"a: x [r]", "a: x [r]"}, limits), "a: x [r]") << "identical errors once, like aggregate";
  limits.maxDenialErrors = 2;
  EXPECT_EQ(denialMessage({"e1", "e2", "e3", "e4"}, limits), "[e1, e2, and 2 more]");
  limits.maxDenialMessageRunes = 60;
  const std::string huge(500, 'x');
  EXPECT_LE(runeCount(denialMessage({huge}, limits)), 60u);
  EXPECT_LE(runeCount(denialMessage({huge, huge + "y"}, limits)), 60u);
}

// ---------------------------------------------------------------------------
// Warnings: findings at warning severity admit, and say why.
// ---------------------------------------------------------------------------

TEST(AdmissionWarnings, WarningSeverityFindingsAdmitWithAWarning) {
  Policy policy = onlyRules({"gpu-missing-driver-pin"});
  policy.rules["gpu-missing-driver-pin"] = RuleSetting::Warning;
  const Reply r = admit(kBarePod, AdmissionPolicy{policy});
  EXPECT_TRUE(r.allowed());
  EXPECT_FALSE(r.response().contains("status"));
  ASSERT_THAT(r.warnings(), SizeIs(1));
  EXPECT_THAT(r.warnings()[0], StartsWith("gpu-missing-driver-pin: spec.nodeSelector: Required value: no nodeSelector"));
  EXPECT_LE(runeCount(r.warnings()[0]), 256u);
  EXPECT_THAT(r.rules(false), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(r.result.warnings, 1u);
}

TEST(AdmissionWarnings, AreSentOnDenialsToo) {
  Policy policy = onlyRules({"gpu-missing-driver-pin", "gpu-missing-toleration"});
  policy.rules["gpu-missing-driver-pin"] = RuleSetting::Warning;
  const Reply r = admit(kBarePod, AdmissionPolicy{policy});
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("[gpu-missing-toleration]"));
  EXPECT_THAT(r.message(), Not(HasSubstr("gpu-missing-driver-pin")));
  ASSERT_THAT(r.warnings(), SizeIs(1));
  EXPECT_THAT(r.warnings()[0], StartsWith("gpu-missing-driver-pin: "));
}

TEST(AdmissionWarnings, OffRulesAreSilent) {
  Policy policy = onlyRules({"gpu-missing-driver-pin"});
  policy.rules["gpu-missing-driver-pin"] = RuleSetting::Off;
  const Reply r = admit(kBarePod, AdmissionPolicy{policy});
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.warnings(), IsEmpty());
  EXPECT_THAT(r.result.hits, IsEmpty());
}

TEST(AdmissionWarnings, AreConciseRuleFieldAndWhatIsWrongWithoutTheRemedy) {
  Finding f;
  f.rule = "gpu-fractional";
  f.path = FieldPath{}.field("spec").field("containers").index(0).field("resources").field("limits").key(
      "nvidia.com/gpu");
  f.error = FieldError::invalid("\"0.5\"",
                                "must be an integer; nvidia.com/gpu is counted in whole units: ask for 1, or share a "
                                "GPU through MIG (nvidia.com/mig-1g.10gb) or time-slicing (nvidia.com/gpu.shared)");
  EXPECT_EQ(warningText(f, "", AdmissionLimits{}),
            "gpu-fractional: spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"0.5\": must be an "
            "integer");
  f.error = FieldError::note("short; fix it");
  EXPECT_EQ(warningText(f, "", AdmissionLimits{}),
            "gpu-fractional: spec.containers[0].resources.limits[nvidia.com/gpu]: short; fix it")
      << "short enough to keep the remedy";
}

TEST(AdmissionWarnings, ASemicolonInsideAQuotedValueDoesNotCutTheWarning) {
  Finding f;
  f.rule = "r";
  f.path = FieldPath{}.field("x");
  f.error = FieldError::invalid("\"a; b\"", "is wrong; " + std::string(200, 'z'));
  EXPECT_EQ(warningText(f, "", AdmissionLimits{}), "r: x: Invalid value: \"a; b\": is wrong");
}

TEST(AdmissionWarnings, AreValidUtf8WithoutControlCharactersAndAtMost256Runes) {
  // The API server silently drops a warning that is not valid UTF-8 or holds
  // any control character, and truncates long ones.
  EXPECT_EQ(sanitizeWarning("line one\nline two\ttab\r\x7f end", 256), "line one line two tab end");
  EXPECT_EQ(sanitizeWarning("bad \xFF\xFE bytes", 256), "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
  EXPECT_EQ(sanitizeWarning("c1 \xC2\x85 control", 256), "c1 control") << "U+0085 is a control character to Go";
  EXPECT_EQ(sanitizeWarning("overlong \xC0\xAF slash", 256), "overlong \xEF\xBF\xBD\xEF\xBF\xBD slash");
  EXPECT_EQ(sanitizeWarning("surrogate \xED\xA0\x80", 256), "surrogate \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");

  std::string wide;
  for (int i = 0; i < 300; ++i) wide += "\xE2\x82\xAC";  // €, three bytes, one rune
  const std::string cut = sanitizeWarning(wide, 256);
  EXPECT_EQ(runeCount(cut), 256u);
  EXPECT_THAT(cut, EndsWith("\xE2\x80\xA6")) << "an ellipsis says it was cut";
  EXPECT_EQ(sanitizeWarning("\n\t ", 256), "") << "nothing left: the warning is skipped";
}

TEST(AdmissionWarnings, HostileTextInAFindingStillMakesAUsableWarning) {
  Finding f;
  f.rule = "label-value-not-string";
  f.path = FieldPath{}.field("spec").field("nodeSelector").key("evil\nkey");
  f.error = FieldError::invalid("\"\x01\x02\xFF\"", std::string(1000, 'y'));
  const std::string w = warningText(f, "(already present before this update)", AdmissionLimits{});
  EXPECT_LE(runeCount(w), 256u);
  EXPECT_THAT(w, EndsWith(" (already present before this update)")) << "the suffix survives the cut";
  for (std::size_t i = 0; i < w.size();) {
    const char32_t cp = decodeUtf8(w, i);
    EXPECT_FALSE(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) << "control character U+" << std::hex << static_cast<std::uint32_t>(cp);
  }
}

TEST(AdmissionWarnings, StayWithinTheApiServersTotalBudget) {
  // 80 containers with a warning each would be ~10,000 runes: the API server
  // would cut every warning to 256 runes and drop the rest. We stop first
  // and say how many were left out.
  const std::string yaml = deploymentWithFractionalContainers(80);
  Policy policy = onlyRules({"gpu-fractional"});
  policy.rules["gpu-fractional"] = RuleSetting::Warning;
  const Reply r = admit(yaml, AdmissionPolicy{policy});
  EXPECT_TRUE(r.allowed());
  std::size_t total = 0;
  for (const std::string& w : r.warnings()) {
    EXPECT_LE(runeCount(w), 256u);
    total += runeCount(w);
  }
  EXPECT_LE(total, 4096u);
  EXPECT_THAT(r.warnings().back(), HasSubstr("more warnings"));
  EXPECT_THAT(r.rules(false), SizeIs(80));
}

TEST(AdmissionWarnings, DuplicatesAreSentOnce) {
  // Two containers with the same path cannot happen, but two rules can say
  // the same thing; the API server would drop the copy anyway.
  Policy policy = onlyRules({"gpu-missing-toleration"});
  policy.rules["gpu-missing-toleration"] = RuleSetting::Warning;
  policy.gpuTaints.push_back(policy.gpuTaints.front());  // the same taint twice: two identical findings
  const Reply r = admit(kBarePod, AdmissionPolicy{policy});
  EXPECT_THAT(r.warnings(), SizeIs(1));
}

// ---------------------------------------------------------------------------
// Operations: what is judged and what is let through.
// ---------------------------------------------------------------------------

TEST(AdmissionOperations, DeleteIsAlwaysAllowed) {
  Request rq;
  rq.operation = "DELETE";
  rq.oldObject = objectFromYaml(kBarePod);
  const Reply r = reviewRaw(reviewBody(nullptr, rq));
  EXPECT_TRUE(r.allowed());
  EXPECT_EQ(r.result.skipped, "DELETE");
  EXPECT_THAT(r.warnings(), IsEmpty());
}

TEST(AdmissionOperations, ConnectIsAlwaysAllowed) {
  Request rq;
  rq.operation = "CONNECT";
  rq.subResource = "exec";
  const Reply r = reviewRaw(reviewBody(json{{"kind", "PodExecOptions"}, {"apiVersion", "v1"}}, rq));
  EXPECT_TRUE(r.allowed());
}

TEST(AdmissionOperations, DryRunIsJudgedTheSame) {
  Request rq;
  rq.dryRun = true;
  const Reply dry = admit(kBarePod, AdmissionPolicy{}, rq);
  const Reply real = admit(kBarePod);
  EXPECT_FALSE(dry.allowed());
  EXPECT_TRUE(dry.result.dryRun);
  EXPECT_EQ(dry.message(), real.message());
}

TEST(AdmissionOperations, SubresourcesAreAllowed) {
  // The kubelet updates pod status constantly; a binding or a scale never
  // changes what the pod asks for.
  for (const char* sub : {"status", "scale", "binding", "ephemeralcontainers", "eviction"}) {
    Request rq;
    rq.operation = "UPDATE";
    rq.subResource = sub;
    rq.oldObject = objectFromYaml(kBarePod);
    const Reply r = admit(kBarePod, AdmissionPolicy{}, rq);
    EXPECT_TRUE(r.allowed()) << sub;
    EXPECT_EQ(r.result.skipped, std::string("subresource ") + sub);
  }
}

TEST(AdmissionOperations, CreateOfAnyKindIsJudged) {
  const Reply r = admit(R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: c
            resources:
              limits: {nvidia.com/gpu: "1"}
)");
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("spec.jobTemplate.spec.template.spec.tolerations: Required value"));
  EXPECT_EQ(r.result.kind, "CronJob");
  EXPECT_EQ(r.result.group, "batch");
}

TEST(AdmissionOperations, ObjectsWithoutGpusAreAllowedQuietly) {
  const Reply r = admit(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
)");
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.warnings(), IsEmpty());
}

// ---------------------------------------------------------------------------
// UPDATE: deny only what the update introduces.
// ---------------------------------------------------------------------------

TEST(AdmissionUpdate, FindingsTheOldObjectAlreadyHadBecomeWarnings) {
  // A pod admitted before the webhook was installed must still be able to
  // change its labels.
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = objectFromYaml(kBarePod);
  json updated = objectFromYaml(kBarePod);
  updated["metadata"]["labels"] = {{"touched", "yes"}};
  const Reply r = reviewRaw(reviewBody(updated, rq));
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.warnings(), Contains(AllOf(StartsWith("gpu-missing-toleration: spec.tolerations: "),
                                           EndsWith("(already present before this update)"))));
  EXPECT_THAT(r.rules(true), IsEmpty());
  EXPECT_THAT(r.rules(false), Contains("gpu-missing-toleration"));
}

TEST(AdmissionUpdate, WhatTheUpdateIntroducesIsDenied) {
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = objectFromYaml(kGoodPod);
  const Reply r = admit(kBarePod, AdmissionPolicy{}, rq);
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("[gpu-missing-toleration]"));
}

TEST(AdmissionUpdate, OldAndNewFindingsAreToldApart) {
  // The old Deployment lacked a toleration; the update also makes the GPU
  // count fractional. Only the fraction is the update's doing.
  const std::string before = gpuguard::testing::gpuPod("limits: {nvidia.com/gpu: \"1\"}", "Deployment");
  json oldObject = objectFromYaml(before);
  oldObject["spec"]["template"]["spec"].erase("tolerations");
  json newObject = oldObject;
  newObject["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "500m";
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const AdmissionPolicy policy = AdmissionPolicy{onlyRules({"gpu-missing-toleration", "gpu-fractional"})};
  const Reply r = reviewRaw(reviewBody(newObject, rq), policy);
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.rules(true), ElementsAre("gpu-fractional"));
  EXPECT_THAT(r.rules(false), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(r.message(), Not(HasSubstr("toleration")));
  EXPECT_THAT(r.warnings(), ElementsAre(StartsWith("gpu-missing-toleration: spec.template.spec.tolerations: ")));
}

TEST(AdmissionUpdate, AContainerInsertedInFrontLeavesTheOldFindingsOld) {
  // Findings are matched by the container's name, not its index: adding a
  // sidecar at containers[0] introduces nothing about the GPU container.
  const std::string before = gpuguard::testing::gpuPod("limits: {nvidia.com/gpu: \"500m\"}", "Deployment");
  const json oldObject = objectFromYaml(before);
  json newObject = oldObject;
  json& containers = newObject["spec"]["template"]["spec"]["containers"];
  containers.insert(containers.begin(), json{{"name", "log-shipper"}, {"image", "fluent/fluent-bit:3.2"}});
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const AdmissionPolicy policy = AdmissionPolicy{onlyRules({"gpu-fractional"})};
  const Reply r = reviewRaw(reviewBody(newObject, rq), policy);
  EXPECT_TRUE(r.allowed()) << r.message();
  EXPECT_THAT(r.warnings(), ElementsAre(AllOf(HasSubstr("spec.template.spec.containers[1].resources.limits"),
                                              EndsWith("(already present before this update)"))));
  // A second GPU container with the same fault is the update's doing.
  json gpu = oldObject["spec"]["template"]["spec"]["containers"][0];
  gpu["name"] = "second";
  containers.push_back(gpu);
  const Reply added = reviewRaw(reviewBody(newObject, rq), policy);
  EXPECT_FALSE(added.allowed());
  EXPECT_THAT(added.message(), HasSubstr("spec.template.spec.containers[2].resources.limits"));
  EXPECT_THAT(added.message(), Not(HasSubstr("containers[1]")));
}

TEST(AdmissionUpdate, WithoutAnOldObjectEverythingCounts) {
  Request rq;
  rq.operation = "UPDATE";
  const Reply r = admit(kBarePod, AdmissionPolicy{}, rq);
  EXPECT_FALSE(r.allowed());
}

TEST(AdmissionUpdate, AnObjectBeingDeletedIsAllowedSoFinalizersCanBeRemoved) {
  // A webhook that blocks finalizer removal leaves objects stuck forever.
  json gone = objectFromYaml(kBarePod);
  gone["metadata"]["deletionTimestamp"] = "2026-11-29T09:51:56Z";
  gone["metadata"]["finalizers"] = json::array();
  json old = objectFromYaml(kGoodPod);
  old["metadata"]["finalizers"] = {"example.com/cleanup"};
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = old;
  const Reply r = reviewRaw(reviewBody(gone, rq));
  EXPECT_TRUE(r.allowed());
  EXPECT_EQ(r.result.skipped, "being deleted");
}

// ---------------------------------------------------------------------------
// Policy: namespace exemptions and suppression annotations.
// ---------------------------------------------------------------------------

TEST(AdmissionPolicy, ExemptNamespacesAreAllowedByTheRequestsNamespace) {
  const AdmissionPolicy policy = with(AdmissionPolicy{}, [](AdmissionPolicy& p) { p.exemptNamespaces = {"kube-system", "team-*"}; });
  for (const char* ns : {"kube-system", "team-a", "team-"}) {
    Request rq;
    rq.namespaceName = ns;
    const Reply r = admit(kBarePod, policy, rq);
    EXPECT_TRUE(r.allowed()) << ns;
    EXPECT_EQ(r.result.skipped, "namespace exempt");
  }
  for (const char* ns : {"default", "kube-system2", "team"}) {
    Request rq;
    rq.namespaceName = ns;
    EXPECT_FALSE(admit(kBarePod, policy, rq).allowed()) << ns;
  }
}

const char* const kSuppressedPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  annotations:
    ignore.gpuguard.io/gpu-missing-toleration: "the GPU pool here is not tainted"
    ignore.gpuguard.io/gpu-missing-driver-pin: "single driver fleet"
spec:
  containers:
  - name: cuda
    resources:
      limits: {nvidia.com/gpu: "1"}
)";

TEST(AdmissionPolicy, SuppressionAnnotationsAreIgnoredByDefault) {
  // Anyone who can create a pod can write an annotation.
  EXPECT_EQ(AdmissionPolicy{}.allowSuppressions, false);
  EXPECT_EQ(AdmissionPolicy::from(yaml::PolicyDocument{}).allowSuppressions, false) << "unset in the policy file";
  const Reply r = admit(kSuppressedPod);
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("[gpu-missing-toleration]"));
}

TEST(AdmissionPolicy, SuppressionAnnotationsCountWhenThePolicyAllowsThem) {
  const AdmissionPolicy policy = AdmissionPolicy::from(yaml::parsePolicy("allowSuppressions: true", "policy.yaml"));
  EXPECT_EQ(policy.allowSuppressions, true);
  const Reply r = admit(kSuppressedPod, policy);
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.warnings(), IsEmpty());
  EXPECT_THAT(r.result.hits, IsEmpty());
}

// ---------------------------------------------------------------------------
// Custom resources: the webhook is the only check they get at apply time.
// ---------------------------------------------------------------------------

TEST(AdmissionCustomResources, RayClusterWorkerGroupsAreJudged) {
  std::ifstream in(std::string(GPUGUARD_SOURCE_DIR) + "/test/e2e/cases/raycluster-fractional.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const Reply r = admit(text.str(), AdmissionPolicy{onlyRules({"gpu-fractional"})});
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(),
              StartsWith("[spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: "
                         "Invalid value: \"500m\": must be an integer"));
  EXPECT_THAT(r.message(), HasSubstr(", spec.workerGroupSpecs[0].template.spec.containers[0].resources.requests"));
  EXPECT_THAT(r.message(), HasSubstr("must be an integer"));
  EXPECT_EQ(r.result.kind, "RayCluster");
  EXPECT_EQ(r.result.group, "ray.io");
}

TEST(AdmissionCustomResources, PyTorchJobNumbersStayNumbersAndAreJudged) {
  // CRs are unstructured: a YAML 0.5 reaches the webhook as the JSON number 0.5.
  const Reply r = admit(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pj}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            resources:
              limits: {nvidia.com/gpu: 0.5}
)",
                        AdmissionPolicy{onlyRules({"gpu-fractional"})});
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(),
              StartsWith("spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources.limits[nvidia.com/gpu]:"
                         " Invalid value: "));
}

// ---------------------------------------------------------------------------
// What the parse keeps: managedFields, status and last-applied are dropped.
// ---------------------------------------------------------------------------

TEST(AdmissionParse, ManagedFieldsStatusAndLastAppliedAreNeverJudged) {
  json pod = objectFromYaml(kGoodPod);
  // Garbage no rule may see: a fractional GPU inside each dropped part.
  const json fractional = {{"containers", {{{"name", "x"}, {"resources", {{"limits", {{"nvidia.com/gpu", "0.5"}}}}}}}}};
  pod["metadata"]["managedFields"] = {{{"manager", "kubectl"}, {"fieldsV1", {{"spec", fractional}}}}};
  pod["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = fractional.dump();
  pod["status"] = {{"phase", "Pending"}, {"spec", fractional}};
  const Reply r = reviewRaw(reviewBody(pod), AdmissionPolicy{onlyRules({"gpu-fractional"})});
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.result.hits, IsEmpty());
}

TEST(AdmissionParse, LabelsAndOtherAnnotationsAreKept) {
  json pod = objectFromYaml(kSuppressedPod);
  pod["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = "{}";
  const AdmissionPolicy policy = with(AdmissionPolicy{}, [](AdmissionPolicy& p) { p.allowSuppressions = true; });
  EXPECT_TRUE(reviewRaw(reviewBody(pod), policy).allowed()) << "suppression annotations survive the pruning";

  json labelled = objectFromYaml(kGoodPod);
  labelled["kind"] = "Widget";  // a CR: label values are not checked by the API server
  labelled["apiVersion"] = "example.com/v1";
  labelled["metadata"]["labels"] = {{"tier", 1}};
  const Reply r = reviewRaw(reviewBody(labelled), AdmissionPolicy{onlyRules({"label-value-not-string"})});
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), StartsWith("metadata.labels[tier]: Invalid value: 1"));
}

// The envelope members the decision never reads are dropped too, but their
// text is still held to JSON: a review is valid or invalid as a whole.
TEST(AdmissionParse, UserInfoOptionsAndResourceMembersAreDroppedButStillMustBeJson) {
  json body = json::parse(reviewBody(objectFromYaml(kGoodPod)));
  for (const char* member : {"userInfo", "options", "resource", "requestKind", "requestResource"}) {
    json odd = body;
    odd["request"][member] = json::array({1, "two", nullptr});  // a shape nothing checks
    EXPECT_TRUE(reviewRaw(odd.dump()).allowed()) << member;
  }
  std::string broken = body.dump();
  const std::string username = R"("username":"alice")";
  broken.replace(broken.find(username), username.size(), R"("username":"al\qice")");
  const Reply r = reviewRaw(broken);
  EXPECT_EQ(r.result.httpStatus, 400);
  EXPECT_THAT(r.result.body, HasSubstr("malformed JSON"));
}

// ---------------------------------------------------------------------------
// Malformed requests: 400 with a clear message, never a crash.
// ---------------------------------------------------------------------------

struct BadCase {
  const char* name;
  std::string body;
  const char* expected;  // part of the message
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

std::vector<BadCase> badCases() {
  const std::string okRequest = R"("request":{"uid":"u","operation":"CREATE","object":{"kind":"Pod"}})";
  return {
      {"empty", "", "malformed JSON"},
      {"not_json", "hello", "malformed JSON"},
      {"truncated", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":)",
       "malformed JSON"},
      {"trailing_garbage", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)" + okRequest + "} x",
       "malformed JSON"},
      {"array", "[1,2]", "must be a JSON object"},
      {"no_api_version", R"({"kind":"AdmissionReview",)" + okRequest + "}", "apiVersion is missing"},
      {"unknown_api_version", R"({"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview",)" + okRequest + "}",
       "unsupported apiVersion \"admission.k8s.io/v2\""},
      {"api_version_number", R"({"apiVersion":1,"kind":"AdmissionReview",)" + okRequest + "}",
       "apiVersion must be a string"},
      {"wrong_kind", R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod",)" + okRequest + "}",
       "kind must be \"AdmissionReview\""},
      {"no_request", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", "has no request"},
      {"null_request", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":null})",
       "has no request"},
      {"request_string", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":"x"})",
       "request must be an object"},
      {"no_uid",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE","object":{}}})",
       "request.uid is missing"},
      {"uid_number",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7,"operation":"CREATE"}})",
       "request.uid must be a string, not number"},
      {"no_operation", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}})",
       "request.operation is missing"},
      {"dry_run_string",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","dryRun":"yes","object":{}}})",
       "request.dryRun must be a boolean"},
      {"object_string",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":"pod"}})",
       "request.object must be an object"},
      {"create_without_object",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":null}})",
       "request.object is missing for CREATE"},
      {"kind_not_object",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","kind":"Pod","object":{}}})",
       "request.kind must be an object"},
      {"deep_nesting", std::string(100000, '['), "nesting deeper than 200 levels"},
      {"deep_objects", [] {
         std::string s = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":)";
         for (int i = 0; i < 5000; ++i) s += R"({"a":)";
         return s;
       }(), "nesting deeper than 200 levels"},
      {"invalid_utf8", std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"\xff"}})"),
       "malformed JSON"},
  };
}

class MalformedRequests : public ::testing::TestWithParam<BadCase> {};

TEST_P(MalformedRequests, Get400WithAStatusNamingTheProblem) {
  const BadCase& c = GetParam();
  const AdmissionResult r = review(c.body, AdmissionPolicy{});
  EXPECT_EQ(r.httpStatus, 400);
  EXPECT_EQ(r.decision, Decision::Invalid);
  EXPECT_THAT(r.error, HasSubstr(c.expected));
  const json body = json::parse(r.body);
  EXPECT_EQ(body["kind"], "Status");
  EXPECT_EQ(body["code"], 400);
  EXPECT_EQ(body["reason"], "BadRequest");
  EXPECT_THAT(body["message"].get<std::string>(), AllOf(StartsWith("invalid AdmissionReview: "), HasSubstr(c.expected)));
}

INSTANTIATE_TEST_SUITE_P(Bodies, MalformedRequests, ::testing::ValuesIn(badCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(AdmissionParse, HugeStringsAreFine) {
  json pod = objectFromYaml(kGoodPod);
  pod["metadata"]["annotations"]["note"] = std::string(2 << 20, 'x');
  EXPECT_TRUE(reviewRaw(reviewBody(pod)).allowed());
}

TEST(AdmissionParse, NestingUpToTheLimitIsAccepted) {
  json pod = objectFromYaml(kGoodPod);
  json deep = "leaf";
  for (int i = 0; i < 150; ++i) deep = json{{"x", deep}};
  pod["spec"]["deep"] = deep;
  EXPECT_TRUE(reviewRaw(reviewBody(pod)).allowed());
}

TEST(AdmissionParse, UnknownOperationsAreAllowedUnjudged) {
  Request rq;
  rq.operation = "FROBNICATE";
  const Reply r = admit(kBarePod, AdmissionPolicy{}, rq);
  EXPECT_TRUE(r.allowed());
  EXPECT_EQ(r.result.skipped, "FROBNICATE");
}

// ---------------------------------------------------------------------------
// Real requests captured from kube-apiserver v1.20.2 (test/data/admission-samples).
// ---------------------------------------------------------------------------

std::filesystem::path samplesDir() {
  return std::filesystem::path(GPUGUARD_SOURCE_DIR) / "test" / "data" / "admission-samples";
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AdmissionSamples, RealApiServerRequestsGetTheExpectedDecision) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(samplesDir())) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(name);
    ++seen;
    const std::string body = readFile(entry.path());
    const json request = json::parse(body)["request"];
    const Reply r = reviewRaw(body);
    EXPECT_EQ(r.result.httpStatus, 200);
    EXPECT_EQ(r.body["apiVersion"], "admission.k8s.io/v1");
    EXPECT_EQ(r.response()["uid"], request["uid"]);
    EXPECT_EQ(r.result.operation, request["operation"]);
    EXPECT_EQ(r.result.kind, request["kind"]["kind"]);
    EXPECT_EQ(r.result.namespaceName, "default");
    EXPECT_EQ(r.result.dryRun, request["dryRun"].get<bool>());
    const std::string op = request["operation"];
    if (op == "DELETE") {
      EXPECT_TRUE(r.allowed());
    } else if (op == "UPDATE") {
      // Admitted before (no webhook then): what they already had is a warning.
      EXPECT_TRUE(r.allowed());
      EXPECT_THAT(r.warnings(), Contains(StartsWith("gpu-missing-toleration: ")));
    } else {
      // A GPU pod or Deployment with no toleration and no driver pin.
      EXPECT_FALSE(r.allowed());
      EXPECT_THAT(r.message(), HasSubstr("tolerations: Required value: no toleration for the GPU node taint"));
      EXPECT_THAT(r.rules(true), AllOf(Contains("gpu-missing-toleration"), Contains("gpu-missing-driver-pin")));
    }
  }
  EXPECT_EQ(seen, 15);
}

TEST(AdmissionSamples, ThePrunedParseJudgesLikeAFullParse) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  const AdmissionPolicy policy;
  for (const auto& entry : std::filesystem::directory_iterator(samplesDir())) {
    if (entry.path().extension() != ".json") continue;  // INDEX.md describes them
    SCOPED_TRACE(entry.path().filename().string());
    const std::string body = readFile(entry.path());
    const json request = json::parse(body)["request"];
    if (request["operation"] != "CREATE") continue;
    std::vector<std::string> full;
    for (const Finding& f : judge(request["object"], policy.engine)) full.push_back(f.rule + " " + f.field());
    std::vector<std::string> webhook;
    const Reply r = reviewRaw(body, policy);
    for (const RuleHit& h : r.result.hits) webhook.push_back(h.rule);
    ASSERT_EQ(full.size(), webhook.size());
    for (std::size_t i = 0; i < full.size(); ++i) EXPECT_THAT(full[i], StartsWith(webhook[i] + " "));
  }
}

TEST(AdmissionSamples, EveryTruncationOfARealRequestIsA400) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  const std::string body = readFile(samplesDir() / "01-CREATE-Pod-gpu-pod.json");
  ASSERT_FALSE(body.empty());
  for (std::size_t len = 0; len < body.size(); len += 7) {
    const AdmissionResult r = review(std::string_view(body).substr(0, len), AdmissionPolicy{});
    ASSERT_EQ(r.httpStatus, 400) << "length " << len;
    ASSERT_TRUE(json::accept(r.body));
  }
}

// ---------------------------------------------------------------------------
// Decision parity: gpuguard-lint and the webhook decide the same for the
// same object, with the same engine and the same policy.
// ---------------------------------------------------------------------------

struct Decided {
  bool denied = false;
  std::vector<std::string> errors;    // rule ids that deny, in order
  std::vector<std::string> warnings;  // rule ids that warn, in order
};

Decided lintSide(const std::vector<Finding>& findings) {
  Decided d;
  for (const Finding& f : findings) {
    if (f.suppressed) continue;
    (f.severity == Severity::Error ? d.errors : d.warnings).push_back(f.rule);
  }
  d.denied = !d.errors.empty();
  return d;
}

Decided webhookSide(const json& object, const AdmissionPolicy& policy) {
  const Reply r = reviewRaw(reviewBody(object), policy);
  Decided d;
  d.denied = !r.allowed();
  d.errors = r.rules(true);
  d.warnings = r.rules(false);
  return d;
}

// Findings the linter makes only because it reads the YAML text (an
// unquoted 010 is the octal 8, yes is a boolean): an AdmissionReview carries
// JSON, so the webhook cannot make them, and for built-in kinds the API
// server rejects such values at decode, before any webhook. They are removed
// from the lint side, and only these rules may have them.
std::vector<Finding> withoutSourceTextFindings(const std::vector<Finding>& lintFindings, const json& object,
                                               const lint::LintPolicy& policy) {
  std::vector<std::string> plain;
  for (const Finding& f : judge(object, policy.engine, JudgeOptions{.exemptions = &policy.exemptions})) {
    plain.push_back(f.rule + "\n" + f.field());
  }
  std::vector<Finding> out;
  for (const Finding& f : lintFindings) {
    auto it = std::find(plain.begin(), plain.end(), f.rule + "\n" + f.field());
    if (it != plain.end()) {
      plain.erase(it);
      out.push_back(f);
    } else {
      EXPECT_THAT(f.rule, ::testing::AnyOf("gpu-label-value", "label-value-not-string"))
          << "only the YAML-text rules may depend on how a value was written: " << f.fieldError();
    }
  }
  return out;
}

void expectParity(const std::string& what, const Decided& lint, const Decided& webhook) {
  EXPECT_EQ(lint.denied, webhook.denied) << what;
  EXPECT_EQ(lint.errors, webhook.errors) << what;
  EXPECT_EQ(lint.warnings, webhook.warnings) << what;
}

// Policy files both front ends read, each front end building its own
// policy from the same document. Suppressions are set explicitly: the two
// front ends only differ in what an unset allowSuppressions means.
std::vector<std::pair<std::string, yaml::PolicyDocument>> parityPolicies() {
  std::vector<std::pair<std::string, yaml::PolicyDocument>> out;
  for (const char* text : {
           "allowSuppressions: true",
           "allowSuppressions: false",
           "allowSuppressions: false\nrules: {gpu-missing-driver-pin: warning, gpu-missing-toleration: warning}",
           "allowSuppressions: true\nexemptions: [{kind: 'StatefulSet|JobSet', rules: [gpu-fractional, gpu-invalid-quantity]}, "
           "{image: 'registry\\.corp/.*'}]",
       }) {
    out.emplace_back(text, yaml::parsePolicy(text, "parity.yaml"));
  }
  return out;
}

// The findings gpuguard-lint's judging makes for a one-document text (as a
// whole object: the webhook never receives a fragment).
std::vector<Finding> lintFindings(const std::string& text, const lint::LintPolicy& policy) {
  const yaml::ParseResult parsed = yaml::parseStream(text);
  EXPECT_EQ(parsed.documents.size(), 1u);
  return parsed.documents.empty() ? std::vector<Finding>{} : lint::judgeDocument(parsed.documents.front(), policy);
}

const char* const kParityCases[] = {
    kGoodPod,
    kBarePod,
    kSuppressedPod,
    R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations: [{operator: Exists}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: ["534"]}]
  containers:
  - {name: a, resources: {limits: {nvidia.com/gpu: 2}}}
  initContainers:
  - {name: i, resources: {requests: {nvidia.com/gpu: 1}}}
)",
    R"(
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  template:
    metadata:
      annotations: {ignore.gpuguard.io/gpu-fractional: "testing"}
    spec:
      containers:
      - {name: a, resources: {limits: {nvidia.com/gpu: 1.5, nvidia.com/mig-1g.10gb: "2"}, requests: {nvidia.com/gpu: 1}}}
)",
    R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, labels: {team: 7}}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            nodeSelector: {nvidia.com/cuda.driver-version.major: 550}
            containers:
            - {name: w, resources: {limits: {nvidia.com/gpu: "-1"}}}
)",
    R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Equal, value: "true", effect: NoSchedule}]
      containers:
      - {name: a, resources: {limits: {nvidia.com/gpu: "1 GPU"}}}
)",
};

TEST(DecisionParity, InlineCasesDecideTheSameInLintAndWebhook) {
  for (const auto& [policyName, document] : parityPolicies()) {
    const lint::LintPolicy lintPolicy = lint::LintPolicy::from(document);
    const AdmissionPolicy admissionPolicy = AdmissionPolicy::from(document);
    for (const char* yaml : kParityCases) {
      const json object = objectFromYaml(yaml);
      const Decided lint = lintSide(withoutSourceTextFindings(lintFindings(yaml, lintPolicy), object, lintPolicy));
      const Decided webhook = webhookSide(object, admissionPolicy);
      expectParity(policyName + " on:" + yaml, lint, webhook);
    }
  }
}

TEST(DecisionParity, TheEndToEndCasesDecideTheSameInLintAndWebhook) {
  // The manifests the e2e suite applies to a real API server, through the
  // real gpuguard-lint front end (lintText) and through the webhook.
  const std::filesystem::path root = std::filesystem::path(GPUGUARD_SOURCE_DIR) / "test" / "e2e" / "cases";
  std::size_t documents = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string text = readFile(entry.path());
    for (const auto& [policyName, document] : parityPolicies()) {
      const lint::LintPolicy lintPolicy = lint::LintPolicy::from(document);
      const AdmissionPolicy admissionPolicy = AdmissionPolicy::from(document);
      lint::LintOptions alone;  // the webhook sees one object, not the DRA objects beside it
      alone.eachDocumentAlone = true;
      const lint::FileReport report = lint::lintText(entry.path().string(), text, lintPolicy, alone);
      const yaml::ParseResult parsed = yaml::parseStream(text);
      std::size_t judged = 0;
      for (const yaml::Document& doc : parsed.documents) {
        if (!doc.value.is_object() || !doc.value.contains("kind") || !doc.value.contains("apiVersion")) continue;
        ++judged;
        std::vector<Finding> lintFindings;
        for (const lint::Located& l : report.findings) {
          if (l.document == doc.index) lintFindings.push_back(l.finding);
        }
        // lintText sorts by line; the webhook reports in engine order.
        Decided lint = lintSide(withoutSourceTextFindings(lintFindings, doc.value, lintPolicy));
        Decided webhook = webhookSide(doc.value, admissionPolicy);
        std::sort(lint.errors.begin(), lint.errors.end());
        std::sort(lint.warnings.begin(), lint.warnings.end());
        std::sort(webhook.errors.begin(), webhook.errors.end());
        std::sort(webhook.warnings.begin(), webhook.warnings.end());
        expectParity(policyName + " on " + entry.path().string() + " document " + std::to_string(doc.index), lint,
                     webhook);
      }
      EXPECT_EQ(judged, report.documents) << entry.path();
      if (policyName == parityPolicies().front().first) documents += judged;
    }
  }
  EXPECT_GE(documents, 13u);
}

}  // namespace
}  // namespace gpuguard::webhook
