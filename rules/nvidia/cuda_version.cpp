#include "rules/nvidia/cuda_version.h"

#include <array>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuguard {
namespace {

using nlohmann::json;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// NGC framework containers (YY.MM-py3) by release. Exact rows: seen in NVIDIA
// release notes (reference §10.3, marked ✔). Spans: the CUDA major every
// release in between certainly has (releases never go back in CUDA version).
struct NgcRow {
  std::string_view release;
  int major, minor, patch;
};
constexpr std::array<NgcRow, 3> kNgcExact{{{"24.05", 12, 4, 1}, {"25.10", 13, 0, 2}, {"26.05", 13, 2, 1}}};
struct NgcSpan {
  std::string_view first, last;
  int major;
};
constexpr std::array<NgcSpan, 2> kNgcSpans{{{"23.10", "25.06", 12}, {"25.10", "26.05", 13}}};

std::optional<CudaVersion> cudaFromEnv(const ContainerRef& c) {
  auto env = c.container->find("env");
  if (env == c.container->end() || !env->is_array()) return std::nullopt;
  std::optional<CudaVersion> fromVersion;
  for (std::size_t i = 0; i < env->size(); ++i) {
    const json& e = (*env)[i];
    if (!e.is_object()) continue;
    auto name = e.find("name");
    auto value = e.find("value");
    if (name == e.end() || !name->is_string() || value == e.end() || !value->is_string()) continue;
    const std::string& n = name->get_ref<const std::string&>();
    const bool require = n == "NVIDIA_REQUIRE_CUDA";
    // The path and the value are made only for the two names read (a pod's
    // env is mostly other variables).
    if (!require && (n != "CUDA_VERSION" || fromVersion)) continue;
    const std::string& text = value->get_ref<const std::string&>();
    CudaVersion v;
    v.path = c.path.field("env").index(i).field("value");
    v.value = text;
    if (require) {
      // "cuda>=12.4 brand=tesla,driver>=470,driver<471 ..."
      std::size_t pos = text.find("cuda>=");
      if (pos == std::string::npos) continue;
      std::size_t end = readCudaVersion(text, pos + 6, v);
      if (end == std::string_view::npos) continue;
      v.origin = "NVIDIA_REQUIRE_CUDA";
      return v;  // what the container runtime enforces wins
    }
    std::size_t end = readCudaVersion(text, 0, v);  // CUDA_VERSION
    if (end == std::string_view::npos || end != text.size()) continue;
    v.origin = "CUDA_VERSION";
    fromVersion = v;
  }
  return fromVersion;
}

// The version the policy's cudaImages give the image. The first entry that
// matches decides: a group that took no version means "not known", never a
// fall back on the built-in table.
std::optional<CudaVersion> cudaFromPolicy(std::string_view image, const Policy& policy, bool& matched) {
  const std::optional<std::string> text = policy.cudaVersionOfImage(image);
  matched = text.has_value();
  CudaVersion v;
  if (!text || readCudaVersion(*text, 0, v) != text->size()) return std::nullopt;
  v.origin = "policy cudaImages";
  return v;
}

}  // namespace

std::string CudaVersion::text() const {
  std::string s = std::to_string(major);
  if (minor) s += "." + std::to_string(*minor);
  else s += ".x";
  if (minor && patch) s += "." + std::to_string(*patch);
  return s;
}

std::size_t readCudaVersion(std::string_view s, std::size_t pos, CudaVersion& v) {
  auto readNumber = [&](std::size_t& p) -> std::optional<int> {
    std::size_t start = p;
    while (p < s.size() && isDigit(s[p]) && p - start < 6) ++p;
    if (p == start || (p < s.size() && isDigit(s[p]))) return std::nullopt;
    return std::stoi(std::string(s.substr(start, p - start)));
  };
  std::size_t p = pos;
  auto major = readNumber(p);
  if (!major) return std::string_view::npos;
  v.major = *major;
  v.minor.reset();
  v.patch.reset();
  if (p + 1 < s.size() && s[p] == '.' && isDigit(s[p + 1])) {
    std::size_t q = p + 1;
    if (auto minor = readNumber(q)) {
      v.minor = minor;
      p = q;
      if (p + 1 < s.size() && s[p] == '.' && isDigit(s[p + 1])) {
        std::size_t r = p + 1;
        if (auto patch = readNumber(r)) {
          v.patch = patch;
          p = r;
        }
      }
    }
  }
  return p;
}

std::optional<CudaVersion> cudaFromNgcRelease(std::string_view release) {
  for (const NgcRow& r : kNgcExact) {
    if (r.release == release) {
      CudaVersion v;
      v.major = r.major;
      v.minor = r.minor;
      v.patch = r.patch;
      return v;
    }
  }
  for (const NgcSpan& s : kNgcSpans) {
    if (release >= s.first && release <= s.last) {  // "YY.MM" compares like the date it is
      CudaVersion v;
      v.major = s.major;
      return v;
    }
  }
  return std::nullopt;
}

std::optional<CudaVersion> cudaFromImage(std::string_view image) {
  if (auto at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  const std::size_t slash = image.rfind('/');
  const std::size_t colon = image.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) return std::nullopt;
  std::string_view repo = image.substr(0, colon);
  const std::string_view tag = image.substr(colon + 1);
  for (std::string_view prefix : {"docker.io/", "index.docker.io/", "registry-1.docker.io/"}) {
    if (repo.starts_with(prefix)) repo.remove_prefix(prefix.size());
  }

  CudaVersion v;
  // nvidia/cuda:<major>.<minor>.<patch>-<flavor>-<os> (also nvcr.io/nvidia/cuda and mirrors).
  if (repo == "nvidia/cuda" || repo.ends_with("/nvidia/cuda")) {
    std::size_t end = readCudaVersion(tag, 0, v);
    if (end != std::string_view::npos && v.minor && (end == tag.size() || tag[end] == '-')) {
      v.forwardCompatImage = true;
      return v;
    }
    return std::nullopt;
  }
  // NGC frameworks: YY.MM[-...].
  for (std::string_view ngc : {"nvcr.io/nvidia/pytorch", "nvcr.io/nvidia/tensorflow", "nvcr.io/nvidia/tritonserver",
                               "nvcr.io/nvidia/sglang"}) {
    if (repo != ngc) continue;
    if (tag.size() >= 5 && isDigit(tag[0]) && isDigit(tag[1]) && tag[2] == '.' && isDigit(tag[3]) &&
        isDigit(tag[4]) && (tag.size() == 5 || tag[5] == '-')) {
      if (auto found = cudaFromNgcRelease(tag.substr(0, 5))) {
        found->origin = "NGC release " + std::string(tag.substr(0, 5));
        found->forwardCompatImage = true;
        return found;
      }
    }
    return std::nullopt;
  }
  // Any tag with a cudaX[.Y[.Z]] component: 2.3.0-cuda12.1-cudnn8-runtime, vectoradd-cuda12.5.0-ubuntu22.04.
  for (std::size_t pos = tag.find("cuda"); pos != std::string_view::npos; pos = tag.find("cuda", pos + 1)) {
    if (pos > 0 && tag[pos - 1] != '-' && tag[pos - 1] != '_' && tag[pos - 1] != '.') continue;
    std::size_t end = readCudaVersion(tag, pos + 4, v);
    if (end == std::string_view::npos) continue;
    if (end == tag.size() || tag[end] == '-' || tag[end] == '_') return v;
  }
  return std::nullopt;
}

std::optional<CudaVersion> containerCuda(const ContainerRef& c, const Policy& policy) {
  if (auto v = cudaFromEnv(c)) return v;
  const std::string_view image = c.image();
  if (image.empty()) return std::nullopt;
  bool policyMatched = false;
  auto v = cudaFromPolicy(image, policy, policyMatched);
  if (!policyMatched) v = cudaFromImage(image);
  if (!v) return std::nullopt;
  v->path = c.path.field("image");
  v->value = std::string(image);
  return v;
}

}  // namespace gpuguard
