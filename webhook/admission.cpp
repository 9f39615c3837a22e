#include "webhook/admission.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

#include "rules/engine.h"
#include "rules/fix.h"
#include "webhook/admission_update.h"
#include "webhook/json_reader.h"
#include "webhook/json_text.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;

constexpr std::string_view kV1 = "admission.k8s.io/v1";
constexpr std::string_view kV1beta1 = "admission.k8s.io/v1beta1";
constexpr std::string_view kPreexisting = "(already present before this update)";
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, one rune

// ---------------------------------------------------------------------------
// Parsing: the reader builds the DOM the rules need and nothing else.
//
// Dropped, because no rule reads them (the engine's pod-site walker and the
// label rule skip metadata other than labels/annotations, and status), nor
// does the decision (it reads uid, kind, operation, subResource, name,
// namespace, dryRun and the objects):
//   request.{userInfo,options,resource,requestKind,requestResource}
//   request.{object,oldObject}.metadata.managedFields
//   request.{object,oldObject}.metadata.annotations
//       ["kubectl.kubernetes.io/last-applied-configuration"]  (a copy of the object)
//   request.{object,oldObject}.status
// Dropped values are still checked (malformed text in them is a 400). Nesting
// deeper than the limit stops the parse (a 400), so hostile input never
// builds a DOM that recursive code downstream could not walk.
// ---------------------------------------------------------------------------

// Where a value sits, on the way to what is dropped.
constexpr JsonContext kRoot = 1, kRequest = 2, kObject = 3, kMetadata = 4, kAnnotations = 5;

JsonContext admissionMember(JsonContext parent, std::string_view key) {
  switch (parent) {
    case kRoot: return key == "request" ? kRequest : kKeepAll;
    case kRequest:
      if (key == "object" || key == "oldObject") return kObject;
      return key == "userInfo" || key == "options" || key == "resource" || key == "requestKind" ||
                     key == "requestResource"
                 ? kDropMember
                 : kKeepAll;
    case kObject:
      if (key == "metadata") return kMetadata;
      return key == "status" ? kDropMember : kKeepAll;
    case kMetadata:
      if (key == "annotations") return kAnnotations;
      return key == "managedFields" ? kDropMember : kKeepAll;
    case kAnnotations:
      return key == "kubectl.kubernetes.io/last-applied-configuration" ? kDropMember : kKeepAll;
    default: return kKeepAll;
  }
}

// ---------------------------------------------------------------------------
// UTF-8 and JSON text.
// ---------------------------------------------------------------------------

// Go's unicode.IsControl: C0, DEL and C1. Line and paragraph separators are
// not controls to Go, but no header should carry them either.
bool isControl(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029;
}

// ---------------------------------------------------------------------------
// Reading the review.
// ---------------------------------------------------------------------------

struct BadRequest {
  std::string message;
};

// A member that is present and not null, or nullptr.
const json* member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const std::string* stringMember(const json& object, const char* key, const char* path) {
  const json* v = member(object, key);
  if (!v) return nullptr;
  if (!v->is_string()) throw BadRequest{std::string(path) + " must be a string, not " + v->type_name()};
  return &v->get_ref<const std::string&>();
}

const json* objectMember(const json& object, const char* key, const char* path) {
  const json* v = member(object, key);
  if (v && !v->is_object()) throw BadRequest{std::string(path) + " must be an object, not " + v->type_name()};
  return v;
}

std::string stringOr(const std::string* s) { return s ? *s : std::string(); }

// The engine on one object of the request, with the policy's exemptions
// matched against the request's namespace.
std::vector<Finding> judgeAdmitted(const json& object, std::string_view namespaceName, const AdmissionPolicy& policy,
                                   const ClusterFacts* cluster) {
  JudgeOptions options;
  options.cluster = cluster;
  options.exemptions = &policy.exemptions;
  options.namespaceName = namespaceName;
  std::vector<Finding> findings = judge(object, policy.engine, options);
  if (!policy.allowSuppressions) forgetSuppressions(findings);
  return findings;
}

bool beingDeleted(const json& object) {
  const json* metadata = member(object, "metadata");
  return metadata && metadata->is_object() && member(*metadata, "deletionTimestamp") != nullptr;
}

// ---------------------------------------------------------------------------
// Writing the reply.
// ---------------------------------------------------------------------------

// A metav1.Status, the shape the API server itself uses for errors.
std::string statusBody(int code, std::string_view reason, std::string_view message) {
  std::string out = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  appendJsonString(out, message);
  out += R"(,"reason":)";
  appendJsonString(out, reason);
  out += R"(,"code":)" + std::to_string(code) + "}";
  return out;
}

void fail(AdmissionResult& r, std::string message, int code = 400) {
  r.httpStatus = code;
  r.decision = Decision::Invalid;
  r.body = code == 400 ? statusBody(code, "BadRequest", "invalid AdmissionReview: " + message)
                       : statusBody(code, "InternalError", message);
  r.error = std::move(message);
}

// RFC 4648 base64, as AdmissionResponse.patch carries the JSONPatch.
std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string responseBody(const AdmissionResult& r, const std::vector<std::string>& warnings,
                         const std::string* denial, const json* patch = nullptr) {
  std::string out;
  out.reserve(160 + r.uid.size() + (denial ? denial->size() : 0) + warnings.size() * 128);
  out += R"({"apiVersion":)";
  appendJsonString(out, r.apiVersion);
  out += R"(,"kind":"AdmissionReview","response":{"uid":)";
  appendJsonString(out, r.uid);
  out += denial ? R"(,"allowed":false)" : R"(,"allowed":true)";
  if (denial) {
    out += R"(,"status":{"status":"Failure","code":403,"reason":"Forbidden","message":)";
    appendJsonString(out, *denial);
    out += '}';
  }
  if (patch && !patch->empty()) {
    out += R"(,"patchType":"JSONPatch","patch":")";
    out += base64(patch->dump());
    out += '"';
  }
  if (!warnings.empty()) {
    out += R"(,"warnings":[)";
    for (std::size_t i = 0; i < warnings.size(); ++i) {
      if (i) out += ',';
      appendJsonString(out, warnings[i]);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

// Adds warnings within the API server's total budget: duplicates dropped,
// and once the budget would run out, one closing "and N more" note.
class WarningList {
 public:
  explicit WarningList(const AdmissionLimits& limits) : limits_(limits) {}

  void add(std::string text) {
    if (text.empty()) return;
    if (std::find(items_.begin(), items_.end(), text) != items_.end()) return;
    const std::size_t runes = runeCount(text);
    if (omitted_ == 0 && total_ + runes + kNoteReserve <= limits_.maxWarningTotalRunes) {
      total_ += runes;
      items_.push_back(std::move(text));
    } else {
      ++omitted_;
    }
  }

  std::vector<std::string> finish() && {
    if (omitted_ > 0) {
      items_.push_back("gpuguard: and " + std::to_string(omitted_) + " more warning" + (omitted_ == 1 ? "" : "s") +
                       " (see the webhook's log or run gpuguard-lint)");
    }
    return std::move(items_);
  }

 private:
  static constexpr std::size_t kNoteReserve = 80;
  const AdmissionLimits& limits_;
  std::vector<std::string> items_;
  std::size_t total_ = 0;
  std::size_t omitted_ = 0;
};

}  // namespace

std::string_view decisionName(Decision d) {
  switch (d) {
    case Decision::Allowed: return "allowed";
    case Decision::Denied: return "denied";
    case Decision::Invalid: return "invalid";
  }
  return "invalid";
}

std::string sanitizeWarning(std::string_view text, std::size_t maxRunes) {
  std::string clean;
  clean.reserve(text.size());
  std::size_t i = 0;
  bool lastSpace = true;  // drops leading spaces
  while (i < text.size()) {
    char32_t cp = decodeUtf8(text, i);
    if (isControl(cp)) cp = ' ';
    if (cp == ' ') {
      if (lastSpace) continue;
      lastSpace = true;
    } else {
      lastSpace = false;
    }
    appendUtf8(clean, cp);
  }
  while (!clean.empty() && clean.back() == ' ') clean.pop_back();
  if (maxRunes == 0) return {};
  if (runeCount(clean) <= maxRunes) return clean;
  std::string cut(firstRunes(clean, maxRunes - 1));
  while (!cut.empty() && cut.back() == ' ') cut.pop_back();
  return cut + std::string(kEllipsis);
}

std::string warningText(const Finding& f, std::string_view suffix, const AdmissionLimits& limits) {
  std::string head = f.rule + ": ";
  if (const std::string field = f.field(); !field.empty()) head += field + ": ";
  const std::string tail = sanitizeWarning(suffix, limits.maxWarningRunes / 2);
  const std::size_t tailRunes = tail.empty() ? 0 : runeCount(tail) + 1;  // and a space
  std::string text = sanitizeWarning(head + f.message(), SIZE_MAX);
  if (runeCount(text) + tailRunes > limits.preferredWarningRunes) {
    text = sanitizeWarning(head + f.error.problem(), SIZE_MAX);
  }
  text = sanitizeWarning(text, limits.maxWarningRunes > tailRunes ? limits.maxWarningRunes - tailRunes : 1);
  return tail.empty() ? text : text + " " + tail;
}

std::string denialEntry(const Finding& f) { return f.fieldError() + " [" + f.rule + "]"; }

std::string denialMessage(const std::vector<std::string>& entries, const AdmissionLimits& limits) {
  // First occurrences, in order. A hash set keeps this linear: an object
  // can carry tens of thousands of findings (one per resource entry).
  std::vector<const std::string*> unique;
  std::unordered_set<std::string_view> seen;
  for (const std::string& e : entries) {
    if (seen.insert(e).second) unique.push_back(&e);
  }
  if (unique.size() == 1) {
    const std::string& only = *unique.front();
    if (runeCount(only) <= limits.maxDenialMessageRunes) return only;
    return std::string(firstRunes(only, limits.maxDenialMessageRunes - 1)) + std::string(kEllipsis);
  }
  std::string out = "[";
  std::size_t runes = 1;
  std::size_t shown = 0;
  constexpr std::size_t kTailReserve = 24;  // ", and 999 more]"
  for (const std::string* e : unique) {
    const std::size_t r = runeCount(*e) + (shown ? 2 : 0);
    const bool fits = runes + r + kTailReserve <= limits.maxDenialMessageRunes;
    if (shown >= limits.maxDenialErrors || (!fits && shown > 0)) break;
    if (shown) out += ", ";
    if (fits) {
      out += *e;
      runes += r;
    } else {  // the first entry alone is too long: cut it
      const std::size_t room = limits.maxDenialMessageRunes - runes - kTailReserve;
      out += firstRunes(*e, room > 1 ? room - 1 : 0);
      out += kEllipsis;
      runes += room;
    }
    ++shown;
  }
  if (shown < unique.size()) out += ", and " + std::to_string(unique.size() - shown) + " more";
  out += ']';
  return out;
}

namespace {

// The JSONPatch of the fixes the rules listed under `mutate:` emit for the
// object's unsuppressed findings; empty when nothing needs fixing. On UPDATE
// only the findings the update introduced are fixed, and never in a field the
// API server makes immutable for the kind (webhook/admission_update.h).
json patchFor(const json& object, const json* oldObject, const AdmissionResult& r, const AdmissionPolicy& policy,
              const ClusterFacts* cluster) {
  const bool update = r.operation == "UPDATE";
  const std::unordered_set<std::string_view> fixable(policy.mutate.begin(), policy.mutate.end());
  std::vector<const Finding*> toFix;
  const std::vector<Finding> findings = judgeAdmitted(object, r.namespaceName, policy, cluster);
  for (const Finding& f : findings) {
    if (!f.suppressed && f.fix && !f.fix->edits.empty() && fixable.count(f.rule)) toFix.push_back(&f);
  }
  std::unordered_set<std::string> preexisting;
  if (update && oldObject && !toFix.empty()) {
    preexisting = preexistingIdentities(judgeAdmitted(*oldObject, r.namespaceName, policy, cluster), *oldObject);
  }
  FindingIdentities identities(object);
  std::vector<JsonEdit> edits;
  for (const Finding* f : toFix) {
    if (update && preexisting.count(identities.of(*f))) continue;
    for (const JsonEdit& e : f->fix->edits) {
      if (!update || !immutableOnUpdate(r.group, r.kind, e)) edits.push_back(e);
    }
  }
  return toJsonPatch(edits, object);
}

enum class Mode { Validate, Mutate };

// The objects of a review whose envelope readRequest() accepted.
struct Objects {
  const json* object = nullptr;
  const json* oldObject = nullptr;
};

// Reads what the decision needs from request into r; throws BadRequest.
Objects readRequest(const json& request, AdmissionResult& r) {
  const std::string* uid = stringMember(request, "uid", "request.uid");
  if (!uid || uid->empty()) throw BadRequest{"request.uid is missing"};
  r.uid = *uid;
  const std::string* operation = stringMember(request, "operation", "request.operation");
  if (!operation || operation->empty()) throw BadRequest{"request.operation is missing"};
  // admissionv1.Operation has four values, spelled in capitals; anything
  // else is no request the API server sends, and allowing it unjudged would
  // let a malformed review through (issue 23).
  if (*operation != "CREATE" && *operation != "UPDATE" && *operation != "DELETE" && *operation != "CONNECT") {
    throw BadRequest{"request.operation must be CREATE, UPDATE, DELETE or CONNECT, not \"" + *operation + "\""};
  }
  r.operation = *operation;
  if (const json* gvk = objectMember(request, "kind", "request.kind")) {
    r.group = stringOr(stringMember(*gvk, "group", "request.kind.group"));
    r.kind = stringOr(stringMember(*gvk, "kind", "request.kind.kind"));
  }
  r.namespaceName = stringOr(stringMember(request, "namespace", "request.namespace"));
  r.name = stringOr(stringMember(request, "name", "request.name"));
  r.subResource = stringOr(stringMember(request, "subResource", "request.subResource"));
  if (const json* dryRun = member(request, "dryRun")) {
    if (!dryRun->is_boolean()) throw BadRequest{std::string("request.dryRun must be a boolean, not ") + dryRun->type_name()};
    r.dryRun = dryRun->get<bool>();
  }
  const Objects objects{objectMember(request, "object", "request.object"),
                        objectMember(request, "oldObject", "request.oldObject")};
  if ((r.operation == "CREATE" || r.operation == "UPDATE") && !objects.object) {
    throw BadRequest{"request.object is missing for " + r.operation};
  }
  if (objects.object) {
    if (r.kind.empty()) r.kind = stringOr(stringMember(*objects.object, "kind", "request.object.kind"));
    if (r.name.empty()) {
      if (const json* metadata = objectMember(*objects.object, "metadata", "request.object.metadata")) {
        r.name = stringOr(stringMember(*metadata, "name", "request.object.metadata.name"));
      }
    }
  }
  return objects;
}

// Checks the envelope; the request member, or throws BadRequest.
const json& readEnvelope(const json& review, AdmissionResult& r) {
  if (!review.is_object()) throw BadRequest{std::string("the body must be a JSON object, not ") + review.type_name()};
  const std::string* apiVersion = stringMember(review, "apiVersion", "apiVersion");
  if (!apiVersion) throw BadRequest{"apiVersion is missing"};
  if (*apiVersion != kV1 && *apiVersion != kV1beta1) {
    throw BadRequest{"unsupported apiVersion \"" + *apiVersion + "\": expected " + std::string(kV1) + " or " +
                     std::string(kV1beta1)};
  }
  r.apiVersion = *apiVersion;
  const std::string* kind = stringMember(review, "kind", "kind");
  if (!kind || *kind != "AdmissionReview") {
    throw BadRequest{"kind must be \"AdmissionReview\"" + (kind ? ", not \"" + *kind + "\"" : std::string())};
  }
  const json* request = objectMember(review, "request", "request");
  if (!request) throw BadRequest{"the AdmissionReview has no request"};
  return *request;
}

// Why the request is allowed without judging, or "".
std::string skipReason(const AdmissionResult& r, const json* object, const AdmissionPolicy& policy) {
  if (r.operation != "CREATE" && r.operation != "UPDATE") return r.operation;
  if (!r.subResource.empty()) return "subresource " + r.subResource;
  if (policy.namespaceExempt(r.namespaceName)) return "namespace exempt";
  if (r.operation == "UPDATE" && beingDeleted(*object)) return "being deleted";
  return {};
}

// POST /validate's verdict on a request that is judged.
void validate(const Objects& objects, const AdmissionPolicy& policy, const AdmissionLimits& limits, AdmissionResult& r,
              const ClusterFacts* cluster) {
  const bool update = r.operation == "UPDATE";
  const std::vector<Finding> findings = judgeAdmitted(*objects.object, r.namespaceName, policy, cluster);
  // On UPDATE, errors the old object already had are not the update's doing.
  std::unordered_set<std::string> preexisting;
  if (update && hasErrors(findings) && objects.oldObject) {
    preexisting =
        preexistingIdentities(judgeAdmitted(*objects.oldObject, r.namespaceName, policy, cluster), *objects.oldObject);
  }
  FindingIdentities identities(*objects.object);

  std::vector<std::string> denials;
  WarningList warnings(limits);
  for (const Finding& f : findings) {
    if (f.suppressed) continue;
    if (f.severity == Severity::Error && (!update || !preexisting.count(identities.of(f)))) {
      denials.push_back(denialEntry(f));
      r.hits.push_back({f.rule, true});
    } else {
      warnings.add(warningText(f, f.severity == Severity::Error ? kPreexisting : std::string_view(), limits));
      r.hits.push_back({f.rule, false});
    }
  }
  const std::vector<std::string> warningTexts = std::move(warnings).finish();
  r.warnings = warningTexts.size();
  if (denials.empty()) {
    r.body = responseBody(r, warningTexts, nullptr);
  } else {
    r.decision = Decision::Denied;
    const std::string message = denialMessage(denials, limits);
    r.body = responseBody(r, warningTexts, &message);
  }
}

AdmissionResult admit(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits, Mode mode,
                      const ClusterFacts* cluster) {
  AdmissionResult r;
  try {
    json review;
    JsonReadError parseError;
    const JsonReadOptions options{limits.maxNestingDepth, admissionMember, kRoot};
    if (!readJson(body, review, parseError, options)) {
      fail(r, parseError.tooDeep ? parseError.message : "malformed JSON: " + parseError.message);
      return r;
    }
    const Objects objects = readRequest(readEnvelope(review, r), r);
    r.decision = Decision::Allowed;
    r.skipped = skipReason(r, objects.object, policy);
    if (!r.skipped.empty()) {
      r.body = responseBody(r, {}, nullptr);
    } else if (mode == Mode::Mutate) {
      // Always allowed: the validating webhook decides; this one only fixes.
      const json patch = patchFor(*objects.object, objects.oldObject, r, policy, cluster);
      r.patchOperations = patch.size();
      r.body = responseBody(r, {}, nullptr, &patch);
    } else {
      validate(objects, policy, limits, r, cluster);
    }
    return r;
  } catch (const BadRequest& e) {
    fail(r, e.message);
  } catch (const std::exception& e) {
    // The engine and the parser are written not to throw on any input; if
    // one does (or memory runs out), the request is still answered.
    fail(r, std::string("internal error reviewing the request: ") + e.what(), 500);
  }
  return r;
}

}  // namespace

AdmissionResult review(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits,
                       const ClusterFacts* cluster) {
  return admit(body, policy, limits, Mode::Validate, cluster);
}

AdmissionResult mutate(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits,
                       const ClusterFacts* cluster) {
  return admit(body, policy, limits, Mode::Mutate, cluster);
}

}  // namespace gpuguard::webhook
