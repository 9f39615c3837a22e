// rules/k8s/field_error: a field error renders exactly as the API server's
// field.Error.ErrorBody() (k8s.io/apimachinery pkg/util/validation/field).
#include "rules/k8s/field_error.h"

#include <gtest/gtest.h>

namespace gpuguard {
namespace {

TEST(FieldErrorBody, InvalidShowsTheValueThenTheDetail) {
  EXPECT_EQ(FieldError::invalid("\"0.5\"", "must be an integer").body(), "Invalid value: \"0.5\": must be an integer");
  EXPECT_EQ(FieldError::invalid("535", "must be a string").body(), "Invalid value: 535: must be a string");
}

TEST(FieldErrorBody, RequiredAndForbiddenNeverShowAValue) {
  EXPECT_EQ(FieldError::required("Limit must be set").body(), "Required value: Limit must be set");
  EXPECT_EQ(FieldError::forbidden("claims may not be set").body(), "Forbidden: claims may not be set");
  FieldError withValue = FieldError::required("x");
  withValue.value = "\"ignored\"";
  EXPECT_EQ(withValue.body(), "Required value: x");
}

TEST(FieldErrorBody, TheOtherTypesUseTheApiServersWords) {
  EXPECT_EQ(FieldError::notSupported("\"Equals\"", "supported values: \"Equal\", \"Exists\"").body(),
            "Unsupported value: \"Equals\": supported values: \"Equal\", \"Exists\"");
  EXPECT_EQ(FieldError::notFound("\"gpu\"", "must be one of the names in pod.spec.resourceClaims").body(),
            "Not found: \"gpu\": must be one of the names in pod.spec.resourceClaims");
  EXPECT_EQ(FieldError::duplicate("\"a\"").body(), "Duplicate value: \"a\"");
}

TEST(FieldErrorBody, WithoutADetailTheBodyEndsAtTheValue) {
  EXPECT_EQ(FieldError::notFound("\"x\"").body(), "Not found: \"x\"");
}

TEST(FieldErrorBody, AdviceAfterAnErrorWithoutADetailOfItsOwnFollowsASemicolon) {
  // The API server says only `Duplicate value: "gpu"`; what we add must not read as its detail.
  EXPECT_EQ(FieldError::duplicate("\"gpu\"", "; remove the second entry").body(),
            "Duplicate value: \"gpu\"; remove the second entry");
}

TEST(FieldErrorRemedy, WhatToDoIsAFieldOfItsOwnAfterTheFirstSemicolon) {
  const FieldError e = FieldError::invalid("\"0.5\"", "must be an integer; ask for 1");
  EXPECT_EQ(e.detail, "must be an integer");
  EXPECT_EQ(e.remedy, "ask for 1");
  EXPECT_EQ(e.problem(), "Invalid value: \"0.5\": must be an integer");
  EXPECT_EQ(e.body(), "Invalid value: \"0.5\": must be an integer; ask for 1");
}

TEST(FieldErrorRemedy, ASemicolonInsideAQuotedStringIsPartOfTheDetail) {
  const FieldError e = FieldError::note("label \"a; b\" is wrong; quote it");
  EXPECT_EQ(e.detail, "label \"a; b\" is wrong");
  EXPECT_EQ(e.remedy, "quote it");
  const FieldError escaped = FieldError::required("key \"x\\\"; y\" is missing");
  EXPECT_EQ(escaped.remedy, "") << "an escaped quote does not end the quoted string";
}

TEST(FieldErrorRemedy, AdviceAfterAnErrorWithoutADetailIsAllRemedy) {
  const FieldError e = FieldError::duplicate("\"gpu\"", "; remove the second entry");
  EXPECT_EQ(e.detail, "");
  EXPECT_EQ(e.remedy, "remove the second entry");
  EXPECT_EQ(e.problem(), "Duplicate value: \"gpu\"");
}

TEST(FieldErrorRemedy, WithoutOneTheProblemIsTheWholeBody) {
  const FieldError e = FieldError::forbidden("claims may not be set");
  EXPECT_EQ(e.remedy, "");
  EXPECT_EQ(e.problem(), e.body());
}

TEST(FieldErrorBody, ANoteIsItsTextAlone) {
  EXPECT_EQ(FieldError::note("Text after the end of the document").body(), "Text after the end of the document");
}

TEST(QuotedValue, QuotesLikeGoPercentQ) {
  EXPECT_EQ(quotedValue("nvidia.com/gpu"), "\"nvidia.com/gpu\"");
  EXPECT_EQ(quotedValue("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quotedValue("tab\there\n"), "\"tab\\there\\n\"");
  EXPECT_EQ(quotedValue(std::string("\x01", 1)), "\"\\x01\"");
  EXPECT_EQ(quotedValue("grüße"), "\"grüße\"");  // printable UTF-8 as it is
}

}  // namespace
}  // namespace gpuguard
