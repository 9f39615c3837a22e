#include "webhook/admission_request.h"

#include <utility>

#include "webhook/json_reader.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;

constexpr std::string_view kV1 = "admission.k8s.io/v1";
constexpr std::string_view kV1beta1 = "admission.k8s.io/v1beta1";

// Where a value sits, on the way to what is dropped (see the header).
constexpr JsonContext kRoot = 1, kRequest = 2, kObject = 3, kMetadata = 4, kAnnotations = 5, kStatus = 6,
                      kUserInfo = 7;

JsonContext admissionMember(JsonContext parent, std::string_view key) {
  switch (parent) {
    case kRoot: return key == "request" ? kRequest : kKeepAll;
    case kRequest:
      if (key == "object" || key == "oldObject") return kObject;
      if (key == "userInfo") return kUserInfo;
      return key == "options" || key == "resource" || key == "requestKind" ||
                     key == "requestResource"
                 ? kDropMember
                 : kKeepAll;
    case kUserInfo:
      // Who asks: a built-in controller creating a child (webhook/admission_owner.h).
      return key == "username" ? kKeepAll : kDropMember;
    case kObject:
      if (key == "metadata") return kMetadata;
      return key == "status" ? kStatus : kKeepAll;
    case kStatus:
      // What says the scheduler bound a pod (dra-claim-with-node-name reads
      // it on UPDATE); the rest of a status (container statuses) no rule reads.
      return key == "phase" || key == "conditions" ? kKeepAll : kDropMember;
    case kMetadata:
      if (key == "annotations") return kAnnotations;
      return key == "managedFields" ? kDropMember : kKeepAll;
    case kAnnotations:
      return key == "kubectl.kubernetes.io/last-applied-configuration" ? kDropMember : kKeepAll;
    default: return kKeepAll;
  }
}

// What is wrong with the review; thrown inside this file only.
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

// Checks the envelope; the request member, or throws BadRequest.
const json& readEnvelope(const json& review, AdmissionRequest& r) {
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

// request.uid and request.operation, both required.
void readIdentity(const json& request, AdmissionRequest& r) {
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
}

// The rest of the attributes: kind, namespace, name, subresource, dryRun.
void readAttributes(const json& request, AdmissionRequest& r) {
  if (const json* gvk = objectMember(request, "kind", "request.kind")) {
    r.group = stringOr(stringMember(*gvk, "group", "request.kind.group"));
    r.kind = stringOr(stringMember(*gvk, "kind", "request.kind.kind"));
  }
  r.namespaceName = stringOr(stringMember(request, "namespace", "request.namespace"));
  r.name = stringOr(stringMember(request, "name", "request.name"));
  r.subResource = stringOr(stringMember(request, "subResource", "request.subResource"));
  // Who asks only ever lets a controller's child warn: a userInfo of another
  // shape (never the API server's) is judged as anyone's, not refused.
  if (const json* userInfo = member(request, "userInfo"); userInfo && userInfo->is_object()) {
    if (const json* username = member(*userInfo, "username"); username && username->is_string()) {
      r.username = username->get<std::string>();
    }
  }
  if (const json* dryRun = member(request, "dryRun")) {
    if (!dryRun->is_boolean()) throw BadRequest{std::string("request.dryRun must be a boolean, not ") + dryRun->type_name()};
    r.dryRun = dryRun->get<bool>();
  }
}

// The objects, and the kind and name from the object when the request has none.
void readObjects(const json& request, AdmissionRequest& r) {
  r.object = objectMember(request, "object", "request.object");
  r.oldObject = objectMember(request, "oldObject", "request.oldObject");
  if ((r.operation == "CREATE" || r.operation == "UPDATE") && !r.object) {
    throw BadRequest{"request.object is missing for " + r.operation};
  }
  if (!r.object) return;
  if (r.kind.empty()) r.kind = stringOr(stringMember(*r.object, "kind", "request.object.kind"));
  if (r.name.empty()) {
    if (const json* metadata = objectMember(*r.object, "metadata", "request.object.metadata")) {
      r.name = stringOr(stringMember(*metadata, "name", "request.object.metadata.name"));
    }
  }
}

// On CREATE the API server resets a pod's status before validating admission
// (PrepareForCreate: phase Pending, no conditions); what a client wrote there
// says nothing of where the pod runs, so no rule may read it.
void forgetStatusOnCreate(ParsedReview& review) {
  if (review.request.operation != "CREATE" || !review.request.object) return;
  json& request = review.document["request"];
  json& object = request["object"];
  if (object.is_object()) object.erase("status");
}

}  // namespace

ParsedReview::~ParsedReview() { releaseJson(owned_); }

std::optional<std::string> parseAdmissionReview(std::string_view body, std::size_t maxNestingDepth, ParsedReview& out,
                                                std::size_t maxValues) {
  JsonReadError parseError;
  const JsonReadOptions options{maxNestingDepth, admissionMember, kRoot, maxValues};
  if (!readJson(body, out.document, parseError, options)) {
    return parseError.tooDeep || parseError.tooMany ? parseError.message : "malformed JSON: " + parseError.message;
  }
  try {
    const json& request = readEnvelope(out.document, out.request);
    readIdentity(request, out.request);
    readAttributes(request, out.request);
    readObjects(request, out.request);
    forgetStatusOnCreate(out);
  } catch (BadRequest& e) {
    return std::move(e.message);
  }
  return std::nullopt;
}

}  // namespace gpuguard::webhook
