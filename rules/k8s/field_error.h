// A field error as the API server has them (k8s.io/apimachinery
// pkg/util/validation/field, errors.go): a type, the bad value and a detail,
// rendered in one place (body()) exactly as Error.ErrorBody() renders them:
//
//   Invalid value: "0.5": must be an integer
//   Required value: Limit must be set for non overcommitable resources
//   Unsupported value: "Equals": supported values: "Equal", "Exists"
//
// The path is kept apart (a FieldPath, segments until a front end prints it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuguard {

enum class FieldErrorType {
  NotFound,      // "Not found"
  Required,      // "Required value" (never shows a value)
  Duplicate,     // "Duplicate value"
  Invalid,       // "Invalid value"
  NotSupported,  // "Unsupported value"
  Forbidden,     // "Forbidden" (never shows a value)
  TooLong,       // "Too long" (never shows a value)
  TooMany,       // "Too many"
  Note,          // not an API field error (text kubectl never reads): the detail alone
};

// ErrorType.String(): "Invalid value", "Required value"...; "" for Note.
std::string_view fieldErrorTypeName(FieldErrorType type);

struct FieldError {
  FieldErrorType type = FieldErrorType::Invalid;
  // The bad value as the API server prints it (%q for strings, %v for numbers
  // and booleans: "\"0.5\"", 535, true); nullopt: none is shown (omitValue).
  std::optional<std::string> value;
  std::string detail;  // what is wrong and what to do

  static FieldError invalid(std::string shownValue, std::string detail);
  static FieldError required(std::string detail);
  static FieldError forbidden(std::string detail);
  static FieldError duplicate(std::string shownValue, std::string detail = {});
  static FieldError notFound(std::string shownValue, std::string detail = {});
  // NotSupported: "supported values: \"a\", \"b\"" (strconv.Quote'd), then `more`
  // after "; " when given.
  static FieldError notSupported(std::string shownValue, const std::vector<std::string>& supported,
                                 std::string more = {});
  static FieldError note(std::string text);

  // Error.ErrorBody(): the type, the value where the type shows one, then ": detail".
  std::string body() const;
};

// Go's strconv.Quote for the ASCII text Kubernetes' enumerations use: quotes
// and backslashes escaped.
std::string goQuote(std::string_view text);

}  // namespace gpuguard
