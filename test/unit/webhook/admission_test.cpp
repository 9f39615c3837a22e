// The webhook's admission decision, as a pure function: AdmissionReview bytes
// in, reply bytes and HTTP status out. Read top to bottom, with
// admission_operations_test.cpp, admission_parse_test.cpp and
// admission_samples_test.cpp, this is the specification of what
// gpuguard-webhook answers. This file: the envelope, denials and warnings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/webhook/admission_test_support.h"
#include "test/unit/test_support.h"
#include "webhook/admission.h"
#include "webhook/json_text.h"

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
using namespace admission_test;

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
  EXPECT_THAT(r.rules(true), Contains("gpu-missing-toleration"));
  EXPECT_THAT(r.rules(false), Contains("gpu-missing-driver-pin"));  // a warning by default
}

// The driver pin as a cluster with mixed drivers raises it: an error.
Policy withDriverPinError(Policy policy) {
  policy.rules["gpu-missing-driver-pin"] = RuleSetting::Error;
  return policy;
}

TEST(AdmissionDenial, SeveralErrorsAreJoinedLikeTheApiServersAggregate) {
  const Reply r = admit(kBarePod, AdmissionPolicy{withDriverPinError(
                                      onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin"}))});
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
  const Policy only = onlyRules({c.rule});
  const AdmissionPolicy policy = AdmissionPolicy{c.rule == std::string("gpu-missing-driver-pin") ? withDriverPinError(only) : only};
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

}  // namespace
}  // namespace gpuguard::webhook
