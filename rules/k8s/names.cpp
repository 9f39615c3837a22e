#include "rules/k8s/names.h"

#include <algorithm>

namespace gpuguard {
namespace {

bool isAlnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isLowerAlnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], any length.
bool matchesQualifiedNameRegex(std::string_view s) {
  return !s.empty() && isAlnum(s.front()) && isAlnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// The name part of a qualified name: the pattern, within 63 characters.
bool isQualifiedNamePart(std::string_view s) { return s.size() <= 63 && matchesQualifiedNameRegex(s); }

// RFC 1123 subdomain pattern: lowercase labels [a-z0-9]([-a-z0-9]*[a-z0-9])?
// joined by '.', any length.
bool matchesDns1123Subdomain(std::string_view s) {
  if (s.empty()) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !isLowerAlnum(label.front()) || !isLowerAlnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [](char c) { return isLowerAlnum(c) || c == '-'; })) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// IsDNS1123Subdomain: the pattern, within 253 characters.
bool isDns1123Subdomain(std::string_view s) { return s.size() <= 253 && matchesDns1123Subdomain(s); }

}  // namespace

bool isNativeResourceName(std::string_view name) {
  return name.find('/') == std::string_view::npos || name.find("kubernetes.io/") != std::string_view::npos;
}

bool isQualifiedName(std::string_view name) {
  std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return isQualifiedNamePart(name);
  if (name.find('/', slash + 1) != std::string_view::npos) return false;
  return isDns1123Subdomain(name.substr(0, slash)) && isQualifiedNamePart(name.substr(slash + 1));
}

bool isExtendedResourceName(std::string_view name) {
  if (isNativeResourceName(name) || name.starts_with("requests.")) return false;
  // IsQualifiedName("requests." + name) without building that string (the
  // checks ask for every resource entry). A non-native name has a '/', so the
  // qualified name's prefix is "requests." + the part of `name` before it:
  // a DNS subdomain when that part is one (the label "requests" is valid)
  // and the whole stays within 253 characters.
  constexpr std::string_view kRequestsDot = "requests.";
  const std::size_t slash = name.find('/');
  const std::string_view prefix = name.substr(0, slash);
  const std::string_view rest = name.substr(slash + 1);
  if (rest.find('/') != std::string_view::npos) return false;
  return kRequestsDot.size() + prefix.size() <= 253 && isDns1123Subdomain(prefix) && isQualifiedNamePart(rest);
}

bool isValidLabelValue(std::string_view v) {
  return v.empty() || isQualifiedNamePart(v);
}

namespace {

// validation.RegexError and MaxLenError, with the API's wording (the double
// space before "or" is in the generated text).
std::string regexError(std::string_view msg, std::string_view fmt, std::string_view examples) {
  return std::string(msg) + " (e.g. " + std::string(examples) + ", regex used for validation is '" + std::string(fmt) +
         "')";
}
std::string maxLenError(int n) { return "must be no more than " + std::to_string(n) + " bytes"; }

constexpr std::string_view kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameExamples = "'MyName',  or 'my.name',  or '123-abc'";

}  // namespace

std::vector<std::string> qualifiedNameErrors(std::string_view value) {
  std::vector<std::string> errs;
  const std::string nameRegex = regexError(kQualifiedNameMsg, kQualifiedNameFmt, kQualifiedNameExamples);
  const std::size_t slash = value.find('/');
  std::string_view name = value;
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      return {"a qualified name " + nameRegex + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"};
    }
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      // IsDNS1123Subdomain: the length, then the pattern.
      if (prefix.size() > 253) errs.push_back("prefix part " + maxLenError(253));
      if (!matchesDns1123Subdomain(prefix)) {
        errs.push_back("prefix part " +
                       regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                  "characters, '-' or '.', and must start and end with an alphanumeric character",
                                  "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
                                  "'example.com'"));
      }
    }
  }
  if (name.empty()) errs.push_back("name part must be non-empty");
  else if (name.size() > 63) errs.push_back("name part " + maxLenError(63));
  if (!matchesQualifiedNameRegex(name)) errs.push_back("name part " + nameRegex);
  return errs;
}

std::vector<std::string> labelValueErrors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(maxLenError(63));
  if (!value.empty() && !matchesQualifiedNameRegex(value)) {
    errs.push_back(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                              "or '.', and must start and end with an alphanumeric character",
                              "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", "'MyValue',  or 'my_value',  or '12345'"));
  }
  return errs;
}

std::vector<std::string> prefixedResourceNameErrors(std::string_view name) {
  std::vector<std::string> errs = qualifiedNameErrors(name);
  if (!isNativeResourceName(name) && !isExtendedResourceName(name)) {
    errs.push_back("doesn't follow extended resource name standard");
  }
  return errs;
}

}  // namespace gpuguard
