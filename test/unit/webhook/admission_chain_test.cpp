// The admission chain's steps on their own (webhook/admission.h): the review
// parsed once into a typed request, the filters that each say why a request
// goes through unjudged, and the decision as a Verdict.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "test/unit/shared_manifests.h"
#include "test/unit/webhook/admission_test_support.h"
#include "webhook/admission_decision.h"
#include "webhook/admission_filters.h"
#include "webhook/admission_request.h"

namespace gpuguard::webhook::admission_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using gpuguard::testing::kRequestsOnlyPod;

TEST(AdmissionRequestParse, TheReviewBecomesATypedRequestWithItsObjects) {
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = objectFromYaml(kRequestsOnlyPod);
  rq.dryRun = true;
  ParsedReview parsed;
  ASSERT_EQ(parseAdmissionReview(reviewBody(objectFromYaml(kRequestsOnlyPod), rq), 200, parsed), std::nullopt);
  const AdmissionRequest& r = parsed.request;
  EXPECT_EQ(r.apiVersion, "admission.k8s.io/v1");
  EXPECT_EQ(r.uid, rq.uid);
  EXPECT_EQ(r.operation, "UPDATE");
  EXPECT_TRUE(r.isUpdate());
  EXPECT_EQ(r.group, "");
  EXPECT_EQ(r.kind, "Pod");
  EXPECT_EQ(r.namespaceName, "ml");
  EXPECT_EQ(r.name, "train");
  EXPECT_TRUE(r.dryRun);
  ASSERT_NE(r.object, nullptr);
  ASSERT_NE(r.oldObject, nullptr);
  EXPECT_EQ((*r.object)["spec"]["containers"][0]["name"], "cuda");
  EXPECT_EQ(r.username, "alice");
  EXPECT_EQ(parsed.document["request"]["userInfo"], (nlohmann::json{{"username", "alice"}}))
      << "what no step reads is not kept: userInfo's groups";
  EXPECT_FALSE(parsed.document["request"].contains("options")) << "what no step reads is not kept";
}

TEST(AdmissionRequestParse, AnInvalidReviewSaysWhatIsWrongAndKeepsWhatWasRead) {
  Request rq;
  rq.operation = "PATCH";
  ParsedReview parsed;
  EXPECT_THAT(parseAdmissionReview(reviewBody(objectFromYaml(kRequestsOnlyPod), rq), 200, parsed),
              Optional(std::string("request.operation must be CREATE, UPDATE, DELETE or CONNECT, not \"PATCH\"")));
  EXPECT_EQ(parsed.request.uid, rq.uid) << "read before the problem: the log can name the request";
  ParsedReview garbage;
  EXPECT_THAT(parseAdmissionReview("{not json", 200, garbage), Optional(HasSubstr("malformed JSON: ")));
}

AdmissionRequest requestFor(const std::string& operation, const std::string& subResource = "",
                            const nlohmann::json* object = nullptr) {
  AdmissionRequest r;
  r.operation = operation;
  r.subResource = subResource;
  r.namespaceName = "ml";
  r.object = object;
  return r;
}

TEST(AdmissionFilters, EachSaysWhyARequestGoesThroughUnjudged) {
  const AdmissionPolicy policy;
  EXPECT_THAT(operationFilter(requestFor("DELETE"), policy), Optional(std::string("DELETE")));
  EXPECT_THAT(operationFilter(requestFor("CONNECT"), policy), Optional(std::string("CONNECT")));
  EXPECT_EQ(operationFilter(requestFor("CREATE"), policy), std::nullopt);
  EXPECT_THAT(subresourceFilter(requestFor("UPDATE", "status"), policy), Optional(std::string("subresource status")));
  EXPECT_EQ(subresourceFilter(requestFor("UPDATE"), policy), std::nullopt);
  AdmissionPolicy exempting;
  exempting.exemptNamespaces = {"m*"};
  EXPECT_THAT(namespaceFilter(requestFor("CREATE"), exempting), Optional(std::string("namespace exempt")));
  EXPECT_EQ(namespaceFilter(requestFor("CREATE"), policy), std::nullopt);
}

TEST(AdmissionFilters, OnlyAnUpdateOfAnObjectBeingDeletedIsLetThroughForIt) {
  const AdmissionPolicy policy;
  const nlohmann::json deleting = {{"metadata", {{"deletionTimestamp", "2026-12-04T10:00:00Z"}}}};
  const nlohmann::json living = {{"metadata", {{"name", "x"}}}};
  EXPECT_THAT(beingDeletedFilter(requestFor("UPDATE", "", &deleting), policy), Optional(std::string("being deleted")));
  EXPECT_EQ(beingDeletedFilter(requestFor("CREATE", "", &deleting), policy), std::nullopt);
  EXPECT_EQ(beingDeletedFilter(requestFor("UPDATE", "", &living), policy), std::nullopt);
}

TEST(AdmissionFilters, TheFirstThatStopsARequestGivesTheReason) {
  ASSERT_EQ(admissionFilters().size(), 4u);
  AdmissionPolicy exempting;
  exempting.exemptNamespaces = {"ml"};
  EXPECT_EQ(skipReason(requestFor("DELETE", "status"), exempting), "DELETE");
  EXPECT_EQ(skipReason(requestFor("UPDATE", "status"), exempting), "subresource status");
  EXPECT_EQ(skipReason(requestFor("UPDATE"), exempting), "namespace exempt");
  EXPECT_EQ(skipReason(requestFor("CREATE"), AdmissionPolicy{}), "") << "judged";
}

TEST(AdmissionDecision, AnErrorDeniesAndAPreexistingOneOnlyWarns) {
  const nlohmann::json pod = objectFromYaml(kRequestsOnlyPod);
  AdmissionRequest create = requestFor("CREATE", "", &pod);
  const Verdict created = decide(create, AdmissionPolicy{}, AdmissionLimits{}, FactsInUse{});
  EXPECT_THAT(created.denials, ElementsAre(HasSubstr("[gpu-requests-without-limits]")));
  EXPECT_THAT(created.warnings, IsEmpty());
  ASSERT_EQ(created.hits.size(), 1u);
  EXPECT_TRUE(created.hits[0].denied);

  AdmissionRequest update = requestFor("UPDATE", "", &pod);
  update.oldObject = &pod;
  const Verdict updated = decide(update, AdmissionPolicy{}, AdmissionLimits{}, FactsInUse{});
  EXPECT_THAT(updated.denials, IsEmpty()) << "not the update's doing";
  EXPECT_THAT(updated.warnings, ElementsAre(HasSubstr("(already present before this update)")));
  EXPECT_FALSE(updated.hits[0].denied);
}

}  // namespace
}  // namespace gpuguard::webhook::admission_test
