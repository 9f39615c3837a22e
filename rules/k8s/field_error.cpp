#include "rules/k8s/field_error.h"

namespace gpuguard {
namespace {

// Splits "<what is wrong>; <what to do>" at the first "; " outside a quoted
// string (a quoted value may hold "; " of its own). Without a remedy after
// it the text stays whole.
FieldError withDetail(FieldErrorType type, std::optional<std::string> value, std::string text) {
  bool quoted = false;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && quoted) {
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ';' && text[i + 1] == ' ' && !quoted) {
      if (i + 2 == text.size()) break;
      std::string remedy = text.substr(i + 2);
      text.resize(i);
      return {type, std::move(value), std::move(text), std::move(remedy)};
    }
  }
  return {type, std::move(value), std::move(text), {}};
}

}  // namespace

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
  return withDetail(FieldErrorType::Invalid, std::move(shownValue), std::move(detail));
}
FieldError FieldError::required(std::string detail) {
  return withDetail(FieldErrorType::Required, std::nullopt, std::move(detail));
}
FieldError FieldError::forbidden(std::string detail) {
  return withDetail(FieldErrorType::Forbidden, std::nullopt, std::move(detail));
}
FieldError FieldError::duplicate(std::string shownValue, std::string detail) {
  return withDetail(FieldErrorType::Duplicate, std::move(shownValue), std::move(detail));
}
FieldError FieldError::notFound(std::string shownValue, std::string detail) {
  return withDetail(FieldErrorType::NotFound, std::move(shownValue), std::move(detail));
}
FieldError FieldError::note(std::string text) { return withDetail(FieldErrorType::Note, std::nullopt, std::move(text)); }

FieldError FieldError::notSupported(std::string shownValue, std::string detail) {
  return withDetail(FieldErrorType::NotSupported, std::move(shownValue), std::move(detail));
}

std::string FieldError::problem() const {
  std::string s(fieldErrorTypeName(type));
  const bool showsValue = type != FieldErrorType::Required && type != FieldErrorType::Forbidden &&
                          type != FieldErrorType::TooLong && type != FieldErrorType::Note;
  if (showsValue && value) s += ": " + *value;
  if (!detail.empty()) s += s.empty() ? detail : ": " + detail;
  return s;
}

std::string FieldError::body() const {
  // The remedy follows "; ", also after an error the API server gives no
  // detail of its own (Duplicate value: "gpu"; remove ...): written after
  // ": " it would read as the API server's words.
  return remedy.empty() ? problem() : problem() + "; " + remedy;
}

std::string quotedValue(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else {
          out += c;  // printable ASCII, and UTF-8 as it is
        }
    }
  }
  return out + "\"";
}

std::string abbreviated(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string renderValue(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

}  // namespace gpuguard
