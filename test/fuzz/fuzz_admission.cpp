// webhook::review and webhook::mutate: AdmissionReview bytes in, HTTP status +
// body out, exactly what the HTTPS server hands them. Invariants:
//  * never crashes or throws;
//  * the status is 200 (allowed / denied) or 400 (invalid), never anything else;
//  * the body is always valid JSON (the API server must be able to read it);
//  * a 200 reply is an AdmissionReview whose response.uid echoes the
//    request's uid and whose response.allowed matches the decision, a denial
//    carries status.code 403, and warnings stay within the API server's
//    budget (<= 256 runes each, <= 4096 in total, no control characters);
//  * mutate answers with the same status, a 200 always allowed, and a patch
//    (when there is one) that is base64 of a JSONPatch array of add/move
//    operations on absolute paths, with patchType JSONPatch;
//  * the patch applies to request.object (test/fuzz/json_patch_apply.h, a
//    strict RFC 6902 applier of its own), and /mutate of the patched object
//    patches nothing more (idempotent).
// Input is bounded by its shape cost (jsonShapeCost), not by a small byte cap:
// work grows with the number of elements, not with the length of strings.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "test/fuzz/fuzz_common.h"
#include "test/fuzz/json_patch_apply.h"
#include "webhook/admission.h"

using gpuguard::webhook::Decision;

namespace {

std::string fromBase64(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0, value = 0;
  for (char c : text) {
    if (c == '=') break;
    const std::size_t digit = kAlphabet.find(c);
    FUZZ_CHECK(digit != std::string::npos);
    value = (value << 6 | static_cast<unsigned>(digit)) & 0xFFFFFF;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xFF);
    }
  }
  return out;
}

constexpr std::size_t kMaxBytes = 1 << 20;
constexpr std::size_t kShapeBudget = 4096;  // values in objects and arrays

// The JSONPatch of a /mutate reply that has one (checked), or an empty array.
nlohmann::json patchOf(const nlohmann::json& response) {
  if (!response.contains("patch")) return nlohmann::json::array();
  return nlohmann::json::parse(fromBase64(response["patch"].get<std::string>()), nullptr, false);
}

// The patch applies to the request's object, and a second /mutate of the
// patched object has nothing left to fix.
void checkPatchAppliesOnce(std::string_view body, const nlohmann::json& patch,
                           const gpuguard::webhook::AdmissionPolicy& policy) {
  nlohmann::json review = nlohmann::json::parse(body, nullptr, false);
  // The webhook's reader accepted the body; nlohmann reads the same JSON
  // (fuzz_json_reader checks the two agree).
  FUZZ_CHECK(!review.is_discarded() && review.contains("request") && review["request"].contains("object"));
  nlohmann::json& object = review["request"]["object"];
  const std::optional<nlohmann::json> patched = gpuguard::fuzz::applyJsonPatch(object, patch);
  if (!patched) std::fprintf(stderr, "patch does not apply: %s\n", patch.dump().c_str());
  FUZZ_CHECK(patched.has_value());
  object = *patched;
  const gpuguard::webhook::AdmissionResult again = gpuguard::webhook::mutate(review.dump(), policy);
  FUZZ_CHECK(again.httpStatus == 200);
  const nlohmann::json reply = nlohmann::json::parse(again.body, nullptr, false);
  FUZZ_CHECK(!reply.is_discarded());
  const nlohmann::json rest = patchOf(reply["response"]);
  if (!rest.empty()) std::fprintf(stderr, "second pass patched again: %s\n", rest.dump().c_str());
  FUZZ_CHECK(rest.empty() && again.patchOperations == 0);
}

void checkMutate(std::string_view body, const gpuguard::webhook::AdmissionPolicy& policy, int reviewStatus) {
  const gpuguard::webhook::AdmissionResult m = gpuguard::webhook::mutate(body, policy);
  FUZZ_CHECK(m.httpStatus == reviewStatus);
  const nlohmann::json reply = nlohmann::json::parse(m.body, nullptr, false);
  FUZZ_CHECK(!reply.is_discarded() && reply.is_object());
  if (m.httpStatus != 200) return;
  FUZZ_CHECK(m.decision == Decision::Allowed);
  FUZZ_CHECK(reply.contains("response") && reply["response"].is_object());
  const auto& response = reply["response"];
  FUZZ_CHECK(response.value("allowed", false));
  if (!response.contains("patch")) {
    FUZZ_CHECK(!response.contains("patchType") && m.patchOperations == 0);
    return;
  }
  FUZZ_CHECK(response.value("patchType", "") == "JSONPatch" && response["patch"].is_string());
  const nlohmann::json patch = nlohmann::json::parse(fromBase64(response["patch"].get<std::string>()), nullptr, false);
  FUZZ_CHECK(patch.is_array() && !patch.empty() && patch.size() == m.patchOperations);
  for (const auto& op : patch) {
    FUZZ_CHECK(op.is_object());
    const std::string kind = op.value("op", "");
    FUZZ_CHECK(kind == "add" || kind == "move");
    FUZZ_CHECK(op.value("path", "").starts_with("/"));
  }
  checkPatchAppliesOnce(body, patch, policy);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxBytes) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  if (gpuguard::fuzz::jsonShapeCost(body) > kShapeBudget) return 0;
  static const gpuguard::webhook::AdmissionPolicy policy;
  const gpuguard::webhook::AdmissionResult r = gpuguard::webhook::review(body, policy);

  const nlohmann::json reply = nlohmann::json::parse(r.body, nullptr, false);
  if (reply.is_discarded()) std::fprintf(stderr, "reply is not JSON: %s\n", r.body.c_str());
  FUZZ_CHECK(!reply.is_discarded());
  FUZZ_CHECK(reply.is_object());

  if (r.httpStatus == 200) {
    FUZZ_CHECK(r.decision == Decision::Allowed || r.decision == Decision::Denied);
    FUZZ_CHECK(reply.value("kind", "") == "AdmissionReview");
    FUZZ_CHECK(reply.contains("response") && reply["response"].is_object());
    const auto& response = reply["response"];
    FUZZ_CHECK(response.contains("uid") && response["uid"].is_string());
    FUZZ_CHECK(response["uid"].get<std::string>() == r.uid);
    FUZZ_CHECK(response.contains("allowed") && response["allowed"].is_boolean());
    FUZZ_CHECK(response["allowed"].get<bool>() == (r.decision == Decision::Allowed));
    FUZZ_CHECK(!response.contains("patch") && !response.contains("patchType"));
    if (r.decision == Decision::Denied) {
      FUZZ_CHECK(response["status"]["code"] == 403);
      FUZZ_CHECK(response["status"]["message"].is_string());
    }
    std::size_t total = 0;
    if (response.contains("warnings")) {
      FUZZ_CHECK(response["warnings"].is_array());
      FUZZ_CHECK(response["warnings"].size() == r.warnings);
      for (const auto& w : response["warnings"]) {
        const std::string s = w.get<std::string>();
        const std::size_t n = gpuguard::fuzz::runes(s);
        FUZZ_CHECK(!s.empty() && n <= 256);
        for (unsigned char c : s) FUZZ_CHECK(c >= 0x20 && c != 0x7F);
        total += n;
      }
    } else {
      FUZZ_CHECK(r.warnings == 0);
    }
    FUZZ_CHECK(total <= 4096);
  } else {
    if (r.httpStatus != 400) std::fprintf(stderr, "status %d: %s\n", r.httpStatus, r.body.c_str());
    FUZZ_CHECK(r.httpStatus == 400);
    FUZZ_CHECK(r.decision == Decision::Invalid);
    FUZZ_CHECK(reply.value("kind", "") == "Status");
  }
  checkMutate(body, policy, r.httpStatus);
  return 0;
}
