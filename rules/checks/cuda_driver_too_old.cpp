// cuda-driver-too-old: a container's CUDA version needs a newer NVIDIA driver
// than the pod's node selection guarantees.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "rules/checks/checks.h"
#include "rules/checks/nvidia_require.h"
#include "rules/cluster_reach.h"
#include "rules/k8s/json_access.h"
#include "rules/gfd_labels.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/node_selection.h"
#include "rules/semantics.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

constexpr RuleDoc kDoc{
    .id = "cuda-driver-too-old",
    .defaultSeverity = Severity::Error,
    .summary = "A CUDA image that needs a newer NVIDIA driver than the nodes the pod may land on, or that has no "
               "code for their GPUs.",
    .description =
        "A CUDA application needs a driver at least as new as its CUDA major version allows under minor-version "
        "compatibility: CUDA 13.x needs >= 580, 12.x >= 525 (525.60.13), 11.x >= 450 (450.80.02; 11.0: "
        "450.36.06); 10.x has no minor-version compatibility (10.2 >= 440.33, 10.1 >= 418.39, 10.0 >= 410.48). "
        "On an older driver the container fails with \"CUDA driver version is insufficient for CUDA runtime "
        "version\". "
        "The CUDA version comes from the container's NVIDIA_REQUIRE_CUDA (\"cuda>=12.4 ...\") or CUDA_VERSION "
        "env when set, else from the image reference: nvidia/cuda and nvcr.io/nvidia/cuda tags (12.4.1-...), "
        "any tag holding cudaX.Y (pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime, "
        "cuda-sample:vectoradd-cuda12.5.0), and NGC framework tags YY.MM (nvcr.io/nvidia/pytorch, tensorflow, "
        "tritonserver, sglang) through the NGC release table. Only the table rows seen in NVIDIA release notes "
        "are encoded exactly (24.05 = CUDA 12.4.1, 25.10 = 13.0.2, 26.05 = 13.2.1); for the other releases only "
        "the major version is used, and only where it is certain: 23.10 to 25.06 are CUDA 12.x, 25.10 to 26.05 "
        "CUDA 13.x. Releases outside those spans (25.07 to 25.09 among them, whose CUDA major was not verified) "
        "and pip-style tags such as cu121 are not read. "
        "The driver comes from the node selection: nvidia.com/cuda.driver-version.major (or the deprecated "
        "nvidia.com/cuda.driver.major, or .full \"550.54.15\") in nodeSelector, or the values a required "
        "node affinity admits (In: its values; Gt N: N+1 and the driver branches above), over every ORed "
        "nodeSelectorTerm. nvidia.com/cuda.runtime-version.major/.full, the newest CUDA the node's driver "
        "supports (525 reports 12.0, 535 12.2, 550 12.4, 570 12.8, 580 13.0...), is compared too: with "
        "minor-version compatibility an image for CUDA 12.4 runs on a driver that reports 12.2, so only an older "
        "major (an image for 13.0 on runtime-version 12) is reported. "
        "When the container's env sets NVIDIA_REQUIRE_CUDA (or another NVIDIA_REQUIRE_* variable), the rule "
        "judges what the NVIDIA container runtime checks before it creates the container "
        "(nvidia-container-toolkit internal/requirements): space-separated alternatives are ORed, "
        "comma-separated clauses ANDed, cuda/driver compare as versions, and a brand or arch clause, which no "
        "driver label decides, may hold. So \"cuda>=13.0 brand=tesla,driver>=535,driver<536\" on driver 535 "
        "is fine (forward compatibility through cuda-compat on data-center GPUs), while \"cuda>=12.4\" alone on "
        "driver 535 (CUDA 12.2) is reported: the runtime refuses the container (\"requirement error: "
        "unsatisfied condition: cuda>=12.4\"). NVIDIA_DISABLE_REQUIRE=true switches that check off (the floor "
        "applies again). The image's own NVIDIA_REQUIRE_CUDA is not in the manifest: for an image the floor "
        "applies, the lenient reading (nvidia/cuda images admit older drivers only on listed data-center "
        "branches, and a newer floor on consumer GPUs). "
        "With the cluster's facts (gpuguard-lint --facts or --cluster, the webhook's cache), a pod whose node "
        "selection does not pin the driver is judged against the drivers of the GPU nodes it can reach "
        "(nvidia.com/cuda.driver-version.major): one below the floor is an error that names those nodes. "
        "No finding when the CUDA version is unknown, or when some ORed term does not bound the driver from "
        "below (the pod may land anywhere). "
        "CUDA 13 and GPUs below compute capability 7.5: CUDA 13.0 dropped Maxwell, Pascal and Volta (V100, P100, "
        "P40, P4; CUDA 12.9 is their last toolkit), so a CUDA 13 image whose node selection admits only such "
        "GPUs (nvidia.com/gpu.family volta/pascal/maxwell, gpu.compute.major below 7, gpu.product "
        "Tesla-V100-..., GKE nvidia-tesla-v100/p100/p4/k80, Karpenter instance-gpu-name v100/k80/m60, AWS "
        "p3, p3dn, p2, g3 instance types) is reported as a warning by this rule: it judges the same CUDA "
        "version against the same node selection, and the fix is the same (another image or other nodes). "
        "That CUDA 13 code cannot run there is derived from NVIDIA's documents, hence the warning.",
    .remediation =
        "Select nodes whose driver is new enough (nodeSelector nvidia.com/cuda.driver-version.major: \"550\", "
        "or a required node affinity {key: nvidia.com/cuda.driver-version.major, operator: Gt, values: "
        "[\"524\"]} for >= 525), or use an image built for an older CUDA.",
    .wrongExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"470\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"550\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
};

// ---------------------------------------------------------------------------
// The CUDA version a container needs.

struct CudaVersion {
  int major = 0;
  std::optional<int> minor;
  std::optional<int> patch;
  std::string origin;  // for the message: "", "NGC release 24.05", "NVIDIA_REQUIRE_CUDA"
  FieldPath path;      // where it was read
  std::string value;   // the value there

  std::string text() const {
    std::string s = std::to_string(major);
    if (minor) s += "." + std::to_string(*minor);
    else s += ".x";
    if (minor && patch) s += "." + std::to_string(*patch);
    return s;
  }
};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Reads up to three dot-separated numbers at `s[pos]`; the first is required.
// Returns the position after what was read, or npos.
std::size_t readVersion(std::string_view s, std::size_t pos, CudaVersion& v) {
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
    std::size_t end = readVersion(tag, 0, v);
    if (end != std::string_view::npos && v.minor && (end == tag.size() || tag[end] == '-')) return v;
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
        return found;
      }
    }
    return std::nullopt;
  }
  // Any tag with a cudaX[.Y[.Z]] component: 2.3.0-cuda12.1-cudnn8-runtime, vectoradd-cuda12.5.0-ubuntu22.04.
  for (std::size_t pos = tag.find("cuda"); pos != std::string_view::npos; pos = tag.find("cuda", pos + 1)) {
    if (pos > 0 && tag[pos - 1] != '-' && tag[pos - 1] != '_' && tag[pos - 1] != '.') continue;
    std::size_t end = readVersion(tag, pos + 4, v);
    if (end == std::string_view::npos) continue;
    if (end == tag.size() || tag[end] == '-' || tag[end] == '_') return v;
  }
  return std::nullopt;
}

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
    const std::string& text = value->get_ref<const std::string&>();
    CudaVersion v;
    v.path = c.path.field("env").index(i).field("value");
    v.value = text;
    if (n == "NVIDIA_REQUIRE_CUDA") {
      // "cuda>=12.4 brand=tesla,driver>=470,driver<471 ..."
      std::size_t pos = text.find("cuda>=");
      if (pos == std::string::npos) continue;
      std::size_t end = readVersion(text, pos + 6, v);
      if (end == std::string_view::npos) continue;
      v.origin = "NVIDIA_REQUIRE_CUDA";
      return v;  // what the container runtime enforces wins
    }
    if (n == "CUDA_VERSION" && !fromVersion) {
      std::size_t end = readVersion(text, 0, v);
      if (end == std::string_view::npos || end != text.size()) continue;
      v.origin = "CUDA_VERSION";
      fromVersion = v;
    }
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
  if (!text || readVersion(*text, 0, v) != text->size()) return std::nullopt;
  v.origin = "policy cudaImages";
  return v;
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

// ---------------------------------------------------------------------------
// The driver a CUDA version needs (reference §10.1).

using Triple = std::array<long long, 3>;

struct DriverFloor {
  Triple version;
  std::string_view text;  // as NVIDIA writes it
  std::string_view why;
};

std::optional<DriverFloor> floorFor(const CudaVersion& v) {
  switch (v.major) {
    case 13: return DriverFloor{{580, 0, 0}, "580", "CUDA 13.x minor-version compatibility"};
    case 12: return DriverFloor{{525, 60, 13}, "525.60.13", "CUDA 12.x minor-version compatibility"};
    case 11:
      // 11.1+ needs 450.80.02; 11.0 (or an unknown minor) the lower 450.36.06.
      if (v.minor && *v.minor >= 1) return DriverFloor{{450, 80, 2}, "450.80.02", "CUDA 11.x minor-version compatibility"};
      return DriverFloor{{450, 36, 6}, "450.36.06", "CUDA 11.0"};
    case 10:
      if (!v.minor) return std::nullopt;
      if (*v.minor == 2) return DriverFloor{{440, 33, 0}, "440.33", "CUDA 10.2, which has no minor-version compatibility"};
      if (*v.minor == 1) return DriverFloor{{418, 39, 0}, "418.39", "CUDA 10.1, which has no minor-version compatibility"};
      if (*v.minor == 0) return DriverFloor{{410, 48, 0}, "410.48", "CUDA 10.0, which has no minor-version compatibility"};
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::string tripleText(const Triple& t, bool full) {
  if (!full) return std::to_string(t[0]);
  auto two = [](long long n) { return (n < 10 ? "0" : "") + std::to_string(n); };
  std::string s = std::to_string(t[0]) + "." + two(t[1]);
  if (t[2] != 0) s += "." + two(t[2]);
  return s;
}

// "550.54.15" or "550.54" -> {550, 54, 15}.
std::optional<Triple> parseDotted(std::string_view s, int minParts, int maxParts) {
  Triple t{0, 0, 0};
  int parts = 0;
  std::size_t pos = 0;
  while (parts < maxParts) {
    std::size_t dot = s.find('.', pos);
    std::string_view part = s.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    if (part.empty() || part.size() > 9 || !std::all_of(part.begin(), part.end(), isDigit)) return std::nullopt;
    t[static_cast<std::size_t>(parts++)] = std::stoll(std::string(part));
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
    if (parts == maxParts) return std::nullopt;
  }
  if (parts < minParts) return std::nullopt;
  return t;
}

// ---------------------------------------------------------------------------
// The lowest driver (or runtime version) a term admits.

// One numeric label family inside one term: In sets, NotIn, Gt/Lt bounds on
// the major label, In sets on the full label.
struct Family {
  std::optional<std::vector<long long>> majorIn;  // intersected across requirements
  std::vector<long long> majorNotIn;
  std::optional<long long> gt, lt;
  std::optional<std::vector<Triple>> fullIn;
  bool impossible = false;  // a Gt/Lt that never matches, or an In that cannot match
  const NodeRequirement* evidence = nullptr;

  void intersectMajor(std::vector<long long> values) {
    if (!majorIn) {
      majorIn = std::move(values);
      return;
    }
    std::vector<long long> kept;
    for (long long v : *majorIn) {
      if (std::find(values.begin(), values.end(), v) != values.end()) kept.push_back(v);
    }
    majorIn = std::move(kept);
  }

  void intersectFull(std::vector<Triple> values) {
    if (!fullIn) {
      fullIn = std::move(values);
      return;
    }
    std::vector<Triple> kept;
    for (const Triple& v : *fullIn) {
      if (std::find(values.begin(), values.end(), v) != values.end()) kept.push_back(v);
    }
    fullIn = std::move(kept);
  }

  void addMajor(const NodeRequirement& r) {
    if (r.op == "In") {
      std::vector<long long> values;
      for (const std::string& s : r.values) {
        if (isCanonicalUnsigned(s)) values.push_back(std::stoll(s));  // anything else matches no GFD value
      }
      intersectMajor(std::move(values));
      evidence = &r;
    } else if (r.op == "NotIn") {
      for (const std::string& s : r.values) {
        if (isCanonicalUnsigned(s)) majorNotIn.push_back(std::stoll(s));
      }
    } else if (r.op == "Gt" || r.op == "Lt") {
      auto n = r.values.size() == 1 ? parseGoInt(r.values.front()) : std::nullopt;
      if (!n) {
        impossible = true;  // the scheduler never matches such a term (§7.3)
        return;
      }
      if (r.op == "Gt") {
        if (!gt || *n > *gt) {
          gt = *n;
          if (!majorIn) evidence = &r;
        }
      } else if (!lt || *n < *lt) {
        lt = *n;
      }
    }
  }

  void addFull(const NodeRequirement& r, int minParts, int maxParts) {
    if (r.op == "In") {
      std::vector<Triple> values;
      for (const std::string& s : r.values) {
        if (auto t = parseDotted(s, minParts, maxParts)) values.push_back(*t);
      }
      intersectFull(std::move(values));
      evidence = &r;
    } else if (r.op == "Gt" || r.op == "Lt") {
      impossible = true;  // "550.54.15" is never an integer
    }
  }

  bool majorAdmits(long long m) const {
    if (majorIn && std::find(majorIn->begin(), majorIn->end(), m) == majorIn->end()) return false;
    if (std::find(majorNotIn.begin(), majorNotIn.end(), m) != majorNotIn.end()) return false;
    if (gt && !(m > *gt)) return false;
    if (lt && !(m < *lt)) return false;
    return true;
  }

  // The lowest version admitted: nullopt when unconstrained from below.
  // `full` tells whether minor and patch are known.
  struct Lowest {
    Triple version;
    bool full;
  };
  std::optional<Lowest> lowest(bool& matchesNothing) const {
    matchesNothing = false;
    if (impossible) {
      matchesNothing = true;
      return std::nullopt;
    }
    if (fullIn) {
      std::optional<Triple> best;
      for (const Triple& t : *fullIn) {
        if (majorAdmits(t[0]) && (!best || t < *best)) best = t;
      }
      if (!best) matchesNothing = true;
      return best ? std::optional<Lowest>(Lowest{*best, true}) : std::nullopt;
    }
    if (majorIn) {
      std::optional<long long> best;
      for (long long m : *majorIn) {
        if (majorAdmits(m) && (!best || m < *best)) best = m;
      }
      if (!best) matchesNothing = true;
      return best ? std::optional<Lowest>(Lowest{{*best, 0, 0}, false}) : std::nullopt;
    }
    if (gt) {
      if (*gt >= std::numeric_limits<long long>::max() - 1 || (lt && *gt + 1 >= *lt)) {
        matchesNothing = true;
        return std::nullopt;
      }
      return Lowest{{*gt + 1, 0, 0}, false};
    }
    return std::nullopt;
  }
};

// The driver labels (driver) and the runtime-version labels (runtime) one term constrains.
struct TermFamilies {
  Family driver, runtime;
};

TermFamilies familiesOf(const NodeTerm& term) {
  TermFamilies f;
  for (const NodeRequirement& r : term.requirements) {
    if (isDriverMajorLabel(r.key)) f.driver.addMajor(r);
    else if (isDriverFullLabel(r.key)) f.driver.addFull(r, 2, 3);
    else if (isRuntimeMajorLabel(r.key)) f.runtime.addMajor(r);
    else if (isRuntimeFullLabel(r.key)) f.runtime.addFull(r, 2, 2);
  }
  return f;
}

enum class Verdict { Unknown, Ok, TooOld, MatchesNothing };

struct TermVerdict {
  Verdict verdict = Verdict::Unknown;
  std::string admitted;  // "driver 470" / "nodes whose driver supports CUDA 11.8 at most"
  std::string evidence;  // describeRequirement(...)
  bool viaRuntime = false;
  Triple lowest{0, 0, 0};
};

TermVerdict judgeTerm(const NodeTerm& term, const CudaVersion& cuda, const DriverFloor& floor) {
  TermVerdict out;
  if (term.matchesNothing) {
    out.verdict = Verdict::MatchesNothing;
    return out;
  }
  const auto [driver, runtime] = familiesOf(term);
  bool driverNothing = false, runtimeNothing = false;
  const auto d = driver.lowest(driverNothing);
  const auto rt = runtime.lowest(runtimeNothing);
  if (driverNothing || runtimeNothing) {
    out.verdict = Verdict::MatchesNothing;
    return out;
  }

  bool anyOk = false, anyOld = false;
  if (d) {
    const bool old = d->full ? d->version < floor.version : d->version[0] < floor.version[0];
    if (old) {
      anyOld = true;
      out.admitted = "driver " + tripleText(d->version, d->full);
      out.evidence = driver.evidence ? describeRequirement(*driver.evidence, term) : "";
      out.lowest = d->version;
    } else {
      anyOk = true;
    }
  }
  if (rt) {
    // The runtime version is the newest CUDA the driver supports. Under
    // minor-version compatibility any CUDA of the same major runs on it.
    bool old = rt->version[0] < cuda.major;
    if (!old && cuda.major < 11 && rt->version[0] == cuda.major && rt->full && cuda.minor) {
      old = rt->version[1] < *cuda.minor;
    }
    if (old) {
      if (!anyOld) {
        out.admitted = "nodes whose driver supports CUDA " +
                       (rt->full ? std::to_string(rt->version[0]) + "." + std::to_string(rt->version[1])
                                 : std::to_string(rt->version[0]) + ".x") +
                       " at most";
        out.evidence = runtime.evidence ? describeRequirement(*runtime.evidence, term) : "";
        out.viaRuntime = true;
        out.lowest = rt->version;
      }
      anyOld = true;
    } else {
      anyOk = true;
    }
  }
  // Every bound holds for every admitted node: one that proves the driver new
  // enough settles it.
  out.verdict = anyOk ? Verdict::Ok : anyOld ? Verdict::TooOld : Verdict::Unknown;
  return out;
}

// ---------------------------------------------------------------------------
// What the container's NVIDIA_REQUIRE_* (rules/checks/nvidia_require.h) say
// of the drivers the node selection admits.

// A driver the node selection admits, and the requirement that says so.
struct AdmittedDriver : NodeDriver {
  std::string evidence;
};

// Whether the runtime-version labels of a term admit a branch.
bool runtimeAdmits(const Family& runtime, const DriverBranch& b) {
  if (!runtime.majorAdmits(b.cudaMajor)) return false;
  if (!runtime.fullIn) return true;
  const Triple cuda{b.cudaMajor, b.cudaMinor, 0};
  return std::find(runtime.fullIn->begin(), runtime.fullIn->end(), cuda) != runtime.fullIn->end();
}

bool runtimeConstrains(const Family& runtime) { return runtime.majorIn || runtime.fullIn || runtime.gt; }

// The drivers a term admits, as far as they matter to a requirement: the
// values of an In, the known branches above a Gt, or the branches whose CUDA
// version the runtime-version labels admit. nullopt when the term does not
// bound the driver from below (the pod may land on any driver).
std::optional<std::vector<AdmittedDriver>> admittedDrivers(const NodeTerm& term) {
  // Named references rather than a structured binding: the lambda below
  // captures `runtime`, which clang before 16 refuses for a binding.
  const TermFamilies families = familiesOf(term);
  const Family& driver = families.driver;
  const Family& runtime = families.runtime;
  if (driver.impossible || runtime.impossible) return std::vector<AdmittedDriver>{};
  const std::string driverEvidence = driver.evidence ? describeRequirement(*driver.evidence, term) : "";
  std::vector<AdmittedDriver> out;
  auto admit = [&](const Triple& v, bool full, const std::string& evidence) {
    const DriverBranch* b = knownBranch(v[0]);
    if (b && !runtimeAdmits(runtime, *b)) return;
    out.push_back({{v, full}, evidence});
  };
  if (driver.fullIn) {
    for (const Triple& t : *driver.fullIn) {
      if (driver.majorAdmits(t[0])) admit(t, true, driverEvidence);
    }
  } else if (driver.majorIn) {
    for (long long m : *driver.majorIn) {
      if (driver.majorAdmits(m)) admit({m, 0, 0}, false, driverEvidence);
    }
  } else if (driver.gt) {
    if (*driver.gt >= std::numeric_limits<long long>::max() - 1) return out;
    const long long lowest = *driver.gt + 1;
    if (driver.majorAdmits(lowest)) admit({lowest, 0, 0}, false, driverEvidence);
    for (const DriverBranch& b : driverBranches()) {
      if (b.driver > lowest && driver.majorAdmits(b.driver)) admit({b.driver, 0, 0}, false, driverEvidence);
    }
  } else if (runtimeConstrains(runtime)) {
    const std::string evidence = runtime.evidence ? describeRequirement(*runtime.evidence, term) : "";
    for (const DriverBranch& b : driverBranches()) {
      if (runtimeAdmits(runtime, b)) out.push_back({{{b.driver, 0, 0}, false}, evidence});
    }
    if (!runtime.lt && !runtime.majorIn && !runtime.fullIn) return std::nullopt;  // newer branches than we know
  } else {
    return std::nullopt;
  }
  return out;
}

// The lowest admitted driver on which the requirement is false, when every
// term bounds the driver.
std::optional<AdmittedDriver> requirementFailure(const Requirement& req, const std::vector<NodeTerm>& terms) {
  std::optional<AdmittedDriver> worst;
  for (const NodeTerm& term : terms) {
    if (term.matchesNothing) continue;
    const auto drivers = admittedDrivers(term);
    if (!drivers) return std::nullopt;
    for (const AdmittedDriver& d : *drivers) {
      if (requirementFailsOn(req, d) && (!worst || d.version < worst->version)) worst = d;
    }
  }
  return worst;
}

// The lowest known branch on which some alternative may hold, for the advice.
std::optional<long long> lowestBranchThatMaySatisfy(const Requirement& req, long long above) {
  for (const DriverBranch& b : driverBranches()) {
    if (b.driver > above && !requirementFailsOn(req, NodeDriver{{b.driver, 0, 0}, false})) return b.driver;
  }
  return std::nullopt;
}

FieldError requirementError(const Requirement& req, const AdmittedDriver& d) {
  const std::string driver = "driver " + tripleText(d.version, d.full);
  std::string why;
  for (const std::vector<RequireClause>& alternative : req.alternatives) {
    const RequireClause* c = falseClause(alternative, d);
    std::string written;
    for (const RequireClause& each : alternative) written += (written.empty() ? "" : ",") + each.text;
    why += (why.empty() ? "" : "; ") + written + " fails on " + c->text;
    if (c->property == "cuda") {
      const DriverBranch* b = knownBranch(d.version[0]);
      why += " (branch " + std::to_string(b->driver) + " supports CUDA " + std::to_string(b->cudaMajor) + "." +
             std::to_string(b->cudaMinor) + ")";
    }
  }
  const RequireClause& first = *falseClause(req.alternatives.front(), d);
  std::string advice = "select nodes with a driver that one alternative admits";
  if (const auto branch = lowestBranchThatMaySatisfy(req, d.version[0])) {
    advice += " (from branch " + std::to_string(*branch) + ": nvidia.com/cuda.driver-version.major Gt \"" +
              std::to_string(*branch - 1) + "\")";
  }
  return FieldError::invalid(
      renderValue(json(req.value)),
      "the NVIDIA container runtime starts the container only when one of the space-separated alternatives "
      "holds (each a comma-separated list of clauses that must all hold), and on " + driver + " (" + d.evidence +
          ") none does: " + why + "; the container is not created (\"requirement error: unsatisfied condition: " +
          first.text + "\"); " + advice + ", or image and requirement for an older CUDA");
}

// ---------------------------------------------------------------------------
// CUDA 13 has no code for GPUs below compute capability 7.5 (reference
// §14.9: Maxwell, Pascal, Volta; CUDA 12.9 is their last toolkit).

// The pre-Turing GPU a label value names, or "" when it names another GPU
// (or is not certain).
std::string preTuringGpu(std::string_view key, std::string_view value) {
  if (key == "nvidia.com/gpu.family") {
    for (std::string_view f : {"volta", "pascal", "maxwell", "kepler", "fermi", "tesla"}) {
      if (value == f) return std::string(value);
    }
    return "";
  }
  if (key == "nvidia.com/gpu.compute.major") {
    return isCanonicalUnsigned(value) && value.size() == 1 && value[0] < '7' ? "compute capability " + std::string(value) + ".x" : "";
  }
  if (key == "nvidia.com/gpu.product") {
    for (std::string_view prefix : {"NVIDIA-", "Tesla-"}) {
      if (value.starts_with(prefix)) value.remove_prefix(prefix.size());
    }
    for (std::string_view model : {"V100", "P100", "P40", "P4", "P6", "K80", "K40", "M60", "M40", "GV100"}) {
      if (value == model || (value.starts_with(model) && value[model.size()] == '-') ||
          (model == "V100" && value.starts_with("V100S"))) {
        return std::string(value);
      }
    }
    return "";
  }
  if (key == "cloud.google.com/gke-accelerator") {
    for (std::string_view v : {"nvidia-tesla-v100", "nvidia-tesla-p100", "nvidia-tesla-p4", "nvidia-tesla-k80"}) {
      if (value == v) return std::string(value.substr(std::string_view("nvidia-tesla-").size()));
    }
    return "";
  }
  if (key == "karpenter.k8s.aws/instance-gpu-name") {
    return value == "v100" || value == "k80" || value == "m60" ? std::string(value) : "";
  }
  if (key == "node.kubernetes.io/instance-type" || key == "beta.kubernetes.io/instance-type") {
    if (value.starts_with("ml.")) value.remove_prefix(3);
    const std::string_view family = value.substr(0, value.find('.'));
    if (family.size() == value.size()) return "";
    if (family == "p3" || family == "p3dn") return "V100 (" + std::string(family) + ")";
    if (family == "p2") return "K80 (p2)";
    if (family == "g3" || family == "g3s") return "M60 (" + std::string(family) + ")";
  }
  return "";
}

// The requirement of a term that admits only pre-Turing GPUs, described.
std::optional<std::string> preTuringTerm(const NodeTerm& term) {
  for (const NodeRequirement& r : term.requirements) {
    const bool lowComputeMajor = r.key == "nvidia.com/gpu.compute.major" && r.op == "Lt" && r.values.size() == 1 &&
                                 isCanonicalUnsigned(r.values.front()) && r.values.front().size() == 1 &&
                                 r.values.front()[0] <= '7';
    const bool allOld = r.op == "In" && !r.values.empty() &&
                        std::all_of(r.values.begin(), r.values.end(),
                                    [&](const std::string& v) { return !preTuringGpu(r.key, v).empty(); });
    if (lowComputeMajor || allOld) return describeRequirement(r, term);
  }
  return std::nullopt;
}

// The evidence that the node selection admits only pre-Turing GPUs.
std::optional<std::string> onlyPreTuringGpus(const std::vector<NodeTerm>& terms) {
  std::optional<std::string> evidence;
  for (const NodeTerm& term : terms) {
    if (term.matchesNothing) continue;
    auto e = preTuringTerm(term);
    if (!e) return std::nullopt;
    if (!evidence) evidence = e;
  }
  return evidence;
}

class CudaDriverTooOld final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      std::optional<std::vector<NodeTerm>> terms;  // read only for a container with something to judge
      auto nodeTerms = [&]() -> const std::vector<NodeTerm>& {
        if (!terms) terms = nodeSelectionTerms(site);
        return *terms;
      };
      for (const ContainerRef& c : site.containers) {
        const auto cuda = containerCuda(c, ctx.policy);
        const std::vector<Requirement> requirements = containerRequirements(c);
        // Only a selection that pins the driver in every term (the pin
        // gpu-missing-driver-pin asks for) says anything of the driver.
        const auto pinned = [&] { return selectionPinsDriver(nodeTerms(), ctx.policy); };
        if (requirements.empty()) {
          if (cuda && pinned()) checkDriverFloor(*cuda, nodeTerms, out);
          else if (cuda && withFacts(ctx, site)) checkReachableDrivers(*cuda, ctx.reach(site), ctx, out);
        } else if (pinned()) {
          // What the runtime checks decides: an alternative may admit an
          // older driver branch (forward compatibility on data-center GPUs).
          for (const Requirement& req : requirements) {
            if (auto failure = requirementFailure(req, nodeTerms())) {
              out.report(req.path, requirementError(req, *failure), renderValue(json(req.value)));
            }
          }
        }
        if (cuda && cuda->major >= 13) checkComputeCapability(*cuda, nodeTerms(), out);
      }
    }
  }

 private:
  // Cluster facts for a pod the scheduler places (not bound by spec.nodeName).
  static bool withFacts(const CheckContext& ctx, const PodSite& site) {
    return ctx.cluster && ctx.cluster->listed(FactKind::Node) && !(site.spec && !stringOr(*site.spec, "nodeName").empty());
  }

  // Without a pin, the drivers of the GPU nodes the pod can reach decide:
  // one older than the CUDA floor is where the container fails.
  static void checkReachableDrivers(const CudaVersion& cuda, const PodReach& reach, const CheckContext& ctx,
                                    Reporter& out) {
    const auto floor = floorFor(cuda);
    if (!floor) return;
    std::vector<std::pair<std::string, std::vector<std::string>>> old;
    for (const auto& [major, nodes] : reachableDriverMajors(reach)) {
      const std::optional<long long> m = parseGoInt(major);
      if (m && *m < floor->version[0]) old.push_back({major, nodes});
    }
    if (old.empty()) return;
    std::string what = "CUDA " + cuda.text();
    if (!cuda.origin.empty()) what += " (" + cuda.origin + ")";
    const long long gt = floor->version[0] - 1;
    out.report(cuda.path,
               FieldError::invalid(
                   renderValue(json(cuda.value)),
                   what + " needs an NVIDIA driver >= " + std::string(floor->text) + " (" + std::string(floor->why) +
                       "), but GPU nodes this pod can reach run driver " + describeDriverMajors(old) + " (" +
                       ctx.cluster->source() +
                       "), where the container fails with \"CUDA driver version is insufficient for CUDA runtime "
                       "version\"; select nodes with driver >= " + std::to_string(floor->version[0]) +
                       " (nvidia.com/cuda.driver-version.major Gt \"" + std::to_string(gt) +
                       "\") or use an image built for an older CUDA"),
               renderValue(json(cuda.value)));
  }

  template <typename Terms>
  static void checkDriverFloor(const CudaVersion& cuda, Terms& nodeTerms, Reporter& out) {
    const auto floor = floorFor(cuda);
    if (!floor) return;
    std::optional<TermVerdict> worst;
    for (const NodeTerm& term : nodeTerms()) {
      TermVerdict v = judgeTerm(term, cuda, *floor);
      if (v.verdict == Verdict::Unknown) return;  // some admitted node may have any driver
      if (v.verdict == Verdict::TooOld && (!worst || v.lowest < worst->lowest)) worst = v;
    }
    if (worst) out.report(cuda.path, error(cuda, *floor, *worst), renderValue(json(cuda.value)));
  }

  // A warning: that CUDA 13 code cannot run there follows from NVIDIA's
  // documents, not from a run (reference §14.9, "derived").
  static void checkComputeCapability(const CudaVersion& cuda, const std::vector<NodeTerm>& terms, Reporter& out) {
    const auto evidence = onlyPreTuringGpus(terms);
    if (!evidence) return;
    const std::string shown = renderValue(json(cuda.value));
    std::string what = "CUDA " + cuda.text();
    if (!cuda.origin.empty()) what += " (" + cuda.origin + ")";
    out.reportWithDefault(cuda.path,
                          FieldError::invalid(shown,
                                              what + " has no code for GPUs below compute capability 7.5 (Maxwell, "
                                                  "Pascal and Volta: V100, P100, P40, P4), "
                                                  "and the node selection admits only such GPUs (" + *evidence +
                                                  "), where CUDA 13 libraries find no kernel for the device; use an "
                                                  "image built for CUDA 12.x (12.9 is "
                                                  "the last release for them) or select Turing or newer GPUs "
                                                  "(nvidia.com/gpu.compute.major Gt \"6\" "
                                                  "admits compute capability 7.x too: prefer nvidia.com/gpu.family "
                                                  "or gpu.product)"),
                          shown,
                          Severity::Warning);
  }

  static FieldError error(const CudaVersion& cuda, const DriverFloor& floor, const TermVerdict& v) {
    std::string what = "CUDA " + cuda.text();
    if (!cuda.origin.empty()) what += " (" + cuda.origin + ")";
    const long long gt = floor.version[0] - 1;
    return FieldError::invalid(
        renderValue(json(cuda.value)),
        what + " needs an NVIDIA driver >= " + std::string(floor.text) + " (" + std::string(floor.why) +
            "), but the node selection admits " + v.admitted + " (" + v.evidence +
            "), where the container fails with \"CUDA driver version is insufficient for CUDA runtime version\"; "
            "select nodes with driver >= " +
            std::to_string(floor.version[0]) + " (nvidia.com/cuda.driver-version.major Gt \"" + std::to_string(gt) +
            "\") or use an image built for an older CUDA");
  }
};

}  // namespace

std::unique_ptr<Rule> makeCudaDriverTooOld() { return std::make_unique<CudaDriverTooOld>(); }

}  // namespace gpuguard::checks
