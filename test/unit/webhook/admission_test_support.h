// Helpers of the admission tests (admission_*_test.cpp): a review around an
// object, shaped like kube-apiserver's, and the reply taken apart.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/engine.h"
#include "webhook/admission.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::webhook::admission_test {

using nlohmann::json;

inline json objectFromYaml(const std::string& text) {
  yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error || parsed.documents.size() != 1) throw std::runtime_error("test YAML must be one document");
  return parsed.documents.front().value;
}

struct Request {
  std::string operation = "CREATE";
  std::string apiVersion = "admission.k8s.io/v1";
  std::string namespaceName = "ml";
  std::string subResource;
  bool dryRun = false;
  json oldObject = nullptr;
  std::string uid = "705ab4f5-6393-11e8-b7cc-42010a800002";
  std::string username = "alice";  // request.userInfo.username
};

// An AdmissionReview shaped like kube-apiserver's (field order included).
inline std::string reviewBody(const json& object, const Request& rq = {}) {
  std::string group, version = "v1", kind;
  const json& source = object.is_object() ? object : rq.oldObject;
  if (source.is_object()) {
    const std::string apiVersion = source.value("apiVersion", "v1");
    const std::size_t slash = apiVersion.find('/');
    if (slash != std::string::npos) group = apiVersion.substr(0, slash), version = apiVersion.substr(slash + 1);
    else version = apiVersion;
    kind = source.value("kind", "");
  }
  json gvk = {{"group", group}, {"version", version}, {"kind", kind}};
  json request = json::object();
  request["uid"] = rq.uid;
  request["kind"] = gvk;
  request["resource"] = {{"group", group}, {"version", version}, {"resource", "things"}};
  request["requestKind"] = gvk;
  if (!rq.subResource.empty()) request["subResource"] = rq.subResource;
  if (source.is_object() && source.contains("metadata")) request["name"] = source["metadata"].value("name", "");
  request["namespace"] = rq.namespaceName;
  request["operation"] = rq.operation;
  request["userInfo"] = {{"username", rq.username}, {"groups", {"system:authenticated"}}};
  request["object"] = object;
  request["oldObject"] = rq.oldObject;
  request["dryRun"] = rq.dryRun;
  request["options"] = {{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}};
  return json{{"kind", "AdmissionReview"}, {"apiVersion", rq.apiVersion}, {"request", request}}.dump();
}

struct Reply {
  AdmissionResult result;
  json body;

  const json& response() const { return body.at("response"); }
  bool allowed() const { return response().at("allowed").get<bool>(); }
  std::string message() const { return response().at("status").at("message").get<std::string>(); }
  std::vector<std::string> warnings() const {
    return response().contains("warnings") ? response()["warnings"].get<std::vector<std::string>>()
                                           : std::vector<std::string>{};
  }
  std::vector<std::string> rules(bool denied) const {
    std::vector<std::string> out;
    for (const RuleHit& h : result.hits) {
      if (h.denied == denied) out.push_back(h.rule);
    }
    return out;
  }
};

inline Reply reviewRaw(const std::string& body, const AdmissionPolicy& policy = {}) {
  Reply r{review(body, policy), json()};
  r.body = json::parse(r.result.body);  // every reply, even an error, is JSON
  return r;
}

// RFC 4648 base64, as response.patch carries the JSONPatch.
inline std::string fromBase64(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0, value = 0;
  for (char c : text) {
    if (c == '=') break;
    value = (value << 6 | static_cast<unsigned>(kAlphabet.find(c))) & 0xFFFFFF;
    bits += 6;
    if (bits >= 8) out += static_cast<char>((value >> (bits -= 8)) & 0xFF);
  }
  return out;
}

// The JSONPatch of a /mutate reply, decoded; an empty array when it has none.
inline json patchOf(const Reply& r) {
  const json& response = r.response();
  return response.contains("patch") ? json::parse(fromBase64(response["patch"].get<std::string>())) : json::array();
}

// The same for POST /mutate.
inline Reply mutateRaw(const std::string& body, const AdmissionPolicy& policy = {}) {
  Reply r{mutate(body, policy), json()};
  r.body = json::parse(r.result.body);
  return r;
}

inline Reply admit(const std::string& yaml, const AdmissionPolicy& policy = {}, const Request& rq = {}) {
  return reviewRaw(reviewBody(objectFromYaml(yaml), rq), policy);
}

template <typename P, typename Change>
P with(P p, Change change) {
  change(p);
  return p;
}

// A GPU Pod with everything right: toleration, driver pin, whole GPUs.
inline const char* const kGoodPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: "1"}
      requests: {nvidia.com/gpu: "1"}
)";

// The same Pod without toleration and driver pin.
inline const char* const kBarePod = R"(
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: "1"}
      requests: {nvidia.com/gpu: "1"}
)";

// A GPU Pod whose findings its annotations suppress.
inline const char* const kSuppressedPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  annotations:
    ignore.gpuguard.io/gpu-missing-toleration: "the GPU pool here is not tainted"
    ignore.gpuguard.io/gpu-missing-driver-pin: "single driver fleet"
spec:
  containers:
  - name: cuda
    resources:
      limits: {nvidia.com/gpu: "1"}
)";

// The denial message the engine's findings should produce, built directly.
inline std::string expectedDenial(const std::string& yaml, const Policy& policy) {
  std::vector<std::string> entries;
  for (const Finding& f : judge(objectFromYaml(yaml), policy)) {
    if (f.severity == Severity::Error && !f.suppressed) entries.push_back(denialEntry(f));
  }
  return denialMessage(entries, AdmissionLimits{});
}

}  // namespace gpuguard::webhook::admission_test
