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

#include <nlohmann/json.hpp>

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
  std::string detail;  // what is wrong
  std::string remedy;  // what to do about it; "" when the detail says it all

  // The factories take the detail as rules write it, "<what is wrong>; <what
  // to do>": the part after the first "; " outside a quoted string is the
  // remedy (a detail that starts with "; " is all remedy).

  static FieldError invalid(std::string shownValue, std::string detail);
  static FieldError required(std::string detail);
  static FieldError forbidden(std::string detail);
  static FieldError duplicate(std::string shownValue, std::string detail = {});
  static FieldError notFound(std::string shownValue, std::string detail = {});
  // NotSupported: the detail starts "supported values: \"a\", \"b\"" (see quotedValue()).
  static FieldError notSupported(std::string shownValue, std::string detail);
  static FieldError note(std::string text);

  // Error.ErrorBody(): the type, the value where the type shows one, then
  // ": detail"; then "; remedy" when there is one.
  std::string body() const;
  // body() without the remedy: what the API server would say, and no more.
  std::string problem() const;
};

// A string value as the API server prints it (%q, strconv.Quote): in double
// quotes, with quotes and backslashes escaped ("nvidia.com/gpu" -> "\"nvidia.com/gpu\"").
std::string quotedValue(std::string_view text);

// A value echoed in a finding, at most about `max` bytes: longer text is cut
// at a UTF-8 character boundary and says how long it was ("0,1,2,... (2000000
// bytes)"), so a hostile 2 MB env value does not come back as a 2 MB line.
std::string abbreviated(std::string_view text, std::size_t max = 200);

// A value as the API server's field errors show it (field.Invalid(path,
// value, detail)), for FieldError::value: strings quoted, the rest as JSON
// ("500m" -> "\"500m\"", 535 -> "535").
std::string renderValue(const nlohmann::json& value);

// The parts with `separator` between them: how the API server joins several
// validator messages into one field error (";" or "; "), and how findings
// list several reasons.
std::string joined(const std::vector<std::string>& parts, std::string_view separator = ", ");

}  // namespace gpuguard
