#include "webhook/admission_response.h"

#include <algorithm>
#include <cstdint>

#include "webhook/json_text.h"

namespace gpuguard::webhook {

std::string statusBody(int code, std::string_view reason, std::string_view message) {
  std::string out = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  appendJsonString(out, message);
  out += R"(,"reason":)";
  appendJsonString(out, reason);
  out += R"(,"code":)" + std::to_string(code) + "}";
  return out;
}

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

std::string responseBody(const ReviewAttributes& r, const std::vector<std::string>& warnings,
                         const std::string* denial, const nlohmann::json* patch) {
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

}  // namespace gpuguard::webhook
