#include "rules/k8s/field_error.h"

namespace gpuguard {

std::string_view fieldErrorTypeName(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::NotFound: return "Not found";
    case FieldErrorType::Required: return "Required value";
    case FieldErrorType::Duplicate: return "Duplicate value";
    case FieldErrorType::Invalid: return "Invalid value";
    case FieldErrorType::NotSupported: return "Unsupported value";
    case FieldErrorType::Forbidden: return "Forbidden";
    case FieldErrorType::TooLong: return "Too long";
    case FieldErrorType::TooMany: return "Too many";
    case FieldErrorType::Note: return "";
  }
  return "";
}

FieldError FieldError::invalid(std::string shownValue, std::string detail) {
  return {FieldErrorType::Invalid, std::move(shownValue), std::move(detail)};
}
FieldError FieldError::required(std::string detail) { return {FieldErrorType::Required, std::nullopt, std::move(detail)}; }
FieldError FieldError::forbidden(std::string detail) {
  return {FieldErrorType::Forbidden, std::nullopt, std::move(detail)};
}
FieldError FieldError::duplicate(std::string shownValue, std::string detail) {
  return {FieldErrorType::Duplicate, std::move(shownValue), std::move(detail)};
}
FieldError FieldError::notFound(std::string shownValue, std::string detail) {
  return {FieldErrorType::NotFound, std::move(shownValue), std::move(detail)};
}
FieldError FieldError::note(std::string text) { return {FieldErrorType::Note, std::nullopt, std::move(text)}; }

FieldError FieldError::notSupported(std::string shownValue, const std::vector<std::string>& supported,
                                    std::string more) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (std::size_t i = 0; i < supported.size(); ++i) detail += (i ? ", " : "") + goQuote(supported[i]);
  }
  if (!more.empty()) detail += (detail.empty() ? "" : "; ") + more;
  return {FieldErrorType::NotSupported, std::move(shownValue), std::move(detail)};
}

std::string FieldError::body() const {
  std::string s(fieldErrorTypeName(type));
  const bool showsValue = type != FieldErrorType::Required && type != FieldErrorType::Forbidden &&
                          type != FieldErrorType::TooLong && type != FieldErrorType::Note;
  if (showsValue && value) s += ": " + *value;
  if (!detail.empty()) s += s.empty() ? detail : ": " + detail;
  return s;
}

std::string goQuote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace gpuguard
