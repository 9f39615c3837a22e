// The admission decision, continued (see admission_test.cpp): what the parse
// keeps and drops, and every malformed request a 400 that names the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/webhook/admission_test_support.h"
#include "test/unit/test_support.h"
#include "webhook/admission.h"

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
      // A million empty strings in 3 MB made a 202 MiB tree: what the body's bytes cannot bound, the values do.
      {"too_many_values", [] {
         std::string s = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":{"spec":{"containers":[{"name":"c","args":[)";
         for (int i = 0; i < 300'000; ++i) s += R"("",)";
         return s + R"(""]}]}}}})";
       }(), "more than 300000 JSON values to keep"},
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

TEST(AdmissionParse, AnOperationOutsideTheFourIsAMalformedReviewNotAnAllowedOne) {
  // Issue 23: "FROBNICATE" and a lower-case "create" were admitted unjudged.
  for (const std::string operation : {"FROBNICATE", "create", "Update", "delete ", "PATCH"}) {
    Request rq;
    rq.operation = operation;
    for (const Reply& r : {admit(kBarePod, AdmissionPolicy{}, rq), mutateRaw(reviewBody(objectFromYaml(kBarePod), rq))}) {
      EXPECT_EQ(r.result.httpStatus, 400) << operation;
      EXPECT_EQ(r.result.decision, Decision::Invalid) << operation;
      EXPECT_THAT(r.result.error, HasSubstr("request.operation must be CREATE, UPDATE, DELETE or CONNECT, not \"" +
                                            operation + "\"")) << operation;
    }
  }
}

TEST(AdmissionParse, TheFourOperationsAreAccepted) {
  for (const std::string operation : {"CREATE", "UPDATE", "DELETE", "CONNECT"}) {
    Request rq;
    rq.operation = operation;
    if (operation == "UPDATE") rq.oldObject = objectFromYaml(kBarePod);
    EXPECT_EQ(admit(kBarePod, AdmissionPolicy{}, rq).result.httpStatus, 200) << operation;
  }
}

}  // namespace
}  // namespace gpuguard::webhook
