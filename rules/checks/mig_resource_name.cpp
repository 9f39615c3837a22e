// mig-resource-name: nvidia.com/mig-* names that are not MIG profiles the
// device plugin advertises, and containers that mix whole GPUs with MIG.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/support/k8s_objects.h"
#include "rules/resources.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/node_selection.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuResources"};

constexpr RuleDoc kDoc{
    .id = "mig-resource-name",
    .defaultSeverity = Severity::Error,
    .summary = "An nvidia.com/mig-* resource that is not a MIG profile name, or a container mixing whole GPUs "
               "with MIG slices.",
    .description =
        "With MIG strategy mixed, the NVIDIA device plugin advertises each MIG profile as its own resource, "
        "named \"nvidia.com/mig-\" + the profile (AddDefaultResourcesToConfig): <G>g.<GB>gb with an optional "
        "attribute suffix, where the profile's '+' becomes '.' (1g.10gb+me is advertised as "
        "nvidia.com/mig-1g.10gb.me; -me stays). Only GPU-instance profiles whose compute slices equal their GPU "
        "slices are advertised, and go-nvlib prints those without the <C>c. part (MigProfileInfo.String), so "
        "nvidia.com/mig-1c.1g.5gb or mig-1c.2g.10gb never exist. Time-sliced MIG resources renamed by the "
        "sharing config carry a .shared suffix. A misspelt name is still a valid extended-resource name (or, "
        "with '+', one the API server rejects only for Pods and workload templates, not inside custom "
        "resources), so the pod stays Pending with \"Insufficient nvidia.com/mig-...\". Accepted: "
        "mig-[<C>c.]<G>g.<GB>gb[.me|.me.all|.gfx|-me][.shared] with 1 <= G <= 8, GB a whole number without "
        "leading zeros, and no <C>c. part (reported with the fix when C equals G). Names listed exactly (without "
        "'*') in the policy's gpuResources are accepted as they are, for MIG resources renamed in the device "
        "plugin's config. A container that asks for both nvidia.com/gpu and a MIG slice needs a node whose "
        "plugin runs strategy mixed and has both a MIG-disabled GPU and a free slice; with strategy single the "
        "slices are advertised as nvidia.com/gpu and no node has nvidia.com/mig-* at all. gpuguard cannot know "
        "the node's strategy: the mix is a warning (strategy mixed nodes with a MIG-disabled GPU run it; the API "
        "server accepts it), and an error when every node-selection term requires nvidia.com/mig.strategy=single, "
        "where it stays Pending. GKE exposes "
        "its MIG partitions as nvidia.com/gpu (one per partition; GKE docs, \"Running multi-instance GPUs\"): a "
        "pod whose every node-selection term requires cloud.google.com/gke-gpu-partition-size and that asks for "
        "nvidia.com/mig-* stays Pending, and is reported.",
    .remediation =
        "Use the profile name the device plugin advertises (kubectl describe node, Allocatable): "
        "nvidia.com/mig-1g.10gb, nvidia.com/mig-1g.10gb.me, nvidia.com/mig-3g.40gb... Ask for whole GPUs or MIG "
        "slices in one container, not both.",
    .wrongExample = "resources:\n  limits:\n    nvidia.com/mig-1g.10gb+me: 1\n",
    .rightExample = "resources:\n  limits:\n    nvidia.com/mig-1g.10gb.me: 1\n",
    .policyKeys = kPolicyKeys,
};

constexpr std::string_view kPrefix = "nvidia.com/mig-";

// A positive decimal without leading zeros, at `s[pos]`, followed by `unit`.
std::optional<long long> number(std::string_view s, std::size_t& pos, std::string_view unit) {
  std::size_t start = pos;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 6) ++pos;
  if (pos == start || s[start] == '0') return std::nullopt;
  if (s.substr(pos, unit.size()) != unit) return std::nullopt;
  long long v = 0;
  for (std::size_t i = start; i < pos; ++i) v = v * 10 + (s[i] - '0');
  pos += unit.size();
  return v;
}

struct Profile {
  std::optional<long long> c;
  long long g = 0;
  long long gb = 0;
  std::string suffix;  // ".me", "-me", ... or ""
  bool shared = false;
};

// Parses "[<C>c.]<G>g.<GB>gb[suffix][.shared]" (the part after "mig-").
std::optional<Profile> parseProfile(std::string_view s) {
  Profile p;
  std::size_t pos = 0;
  {
    std::size_t probe = 0;
    if (auto c = number(s, probe, "c.")) {
      p.c = c;
      pos = probe;
    }
  }
  auto g = number(s, pos, "g.");
  if (!g || *g > 8) return std::nullopt;
  auto gb = number(s, pos, "gb");
  if (!gb) return std::nullopt;
  if (p.c && *p.c > 8) return std::nullopt;
  p.g = *g;
  p.gb = *gb;
  std::string_view rest = s.substr(pos);
  if (rest.ends_with(".shared")) {
    p.shared = true;
    rest.remove_suffix(7);
  }
  for (std::string_view suffix : {"", ".me", ".me.all", ".gfx", "-me"}) {
    if (rest == suffix) {
      p.suffix = std::string(suffix);
      return p;
    }
  }
  return std::nullopt;
}

std::string advertisedName(const Profile& p) {
  return std::string(kPrefix) + std::to_string(p.g) + "g." + std::to_string(p.gb) + "gb" + p.suffix +
         (p.shared ? ".shared" : "");
}

// The GPU-instance profiles (compute slices = GPU slices) each MIG-capable
// GPU offers, as the device plugin names them ('+' written '.'): NVIDIA
// mig-parted deployments/systemd/config-default.yaml, Aug 2026 (reference
// §14.10), which also lists 3g.95gb, 4g.95gb and 7g.189gb without a GPU.
struct GpuProfiles {
  std::string_view gpu;
  std::array<std::string_view, 10> profiles;
};
constexpr std::array<GpuProfiles, 12> kMigProfiles{{
    {"A100 40GB", {"1g.5gb", "1g.5gb.me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}},
    {"A100/H100 80GB", {"1g.10gb", "1g.10gb.me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}},
    {"A30", {"1g.6gb", "1g.6gb.me", "2g.12gb", "2g.12gb.me", "4g.24gb"}},
    {"H100 NVL", {"1g.12gb", "1g.12gb.me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"}},
    {"H100 96GB, GH200 96GB, H20", {"1g.12gb", "1g.12gb.me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"}},
    {"H200", {"1g.18gb", "1g.18gb.me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}},
    {"GH200 144GB", {"1g.18gb", "1g.18gb.me", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb"}},
    {"B200", {"1g.23gb", "1g.23gb.me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"}},
    {"GB200", {"1g.23gb", "1g.23gb.me", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb"}},
    {"B300", {"1g.34gb", "1g.34gb.me", "1g.67gb", "2g.67gb", "3g.135gb", "4g.135gb", "7g.269gb"}},
    {"GB300", {"1g.35gb", "1g.35gb.me", "1g.70gb", "2g.70gb", "3g.139gb", "4g.139gb", "7g.278gb"}},
    {"RTX PRO 6000 Blackwell",
     {"1g.24gb", "1g.24gb.gfx", "1g.24gb.me.all", "1g.24gb-me", "2g.48gb", "2g.48gb.gfx", "2g.48gb.me.all",
      "2g.48gb-me", "4g.96gb", "4g.96gb.gfx"}},
}};
constexpr std::array<std::string_view, 3> kProfilesWithoutGpu{"3g.95gb", "4g.95gb", "7g.189gb"};

std::string profileText(const Profile& p) { return std::to_string(p.g) + "g." + std::to_string(p.gb) + "gb" + p.suffix; }

bool someGpuOffers(const std::string& profile) {
  if (std::find(kProfilesWithoutGpu.begin(), kProfilesWithoutGpu.end(), profile) != kProfilesWithoutGpu.end()) {
    return true;
  }
  return std::any_of(kMigProfiles.begin(), kMigProfiles.end(), [&](const GpuProfiles& g) {
    return std::find(g.profiles.begin(), g.profiles.end(), profile) != g.profiles.end();
  });
}

// The attribute-less profiles of one slice count that some GPU offers:
// "3g.20gb, 3g.40gb, 3g.47gb, ...".
std::string offeredWithSlices(long long slices) {
  const std::string prefix = std::to_string(slices) + "g.";
  std::vector<std::string_view> seen;
  std::string out;
  for (const GpuProfiles& g : kMigProfiles) {
    for (std::string_view p : g.profiles) {
      if (!p.starts_with(prefix) || !p.ends_with("gb")) continue;
      if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
      seen.push_back(p);
      out += (out.empty() ? "" : ", ") + std::string(p);
    }
  }
  return out;
}

// Why a well-formed profile is one no GPU offers, or nullopt.
std::optional<std::string> unofferedProfile(const Profile& p) {
  const std::string profile = profileText(p);
  if (someGpuOffers(profile)) return std::nullopt;
  std::string why = "no MIG-capable GPU offers the profile " + profile +
                    " (NVIDIA's mig-parted profile list), so no node advertises it and the pod stays Pending";
  if (!p.suffix.empty() && someGpuOffers(profileText({std::nullopt, p.g, p.gb, "", false}))) {
    why += "; " + profileText({std::nullopt, p.g, p.gb, "", false}) + " exists without the " + p.suffix +
           " attribute (only 1- and 2-slice profiles carry .me, -me or .me.all, and 1-, 2- and 4-slice ones .gfx, "
           "on the GPUs that have them)";
  } else if (const std::string same = offeredWithSlices(p.g); !same.empty()) {
    why += "; the " + std::to_string(p.g) + "-slice profiles are " + same;
  } else {
    why += "; no GPU has " + std::to_string(p.g) + "-slice profiles (1, 2, 3, 4 and 7 exist)";
  }
  return why + "; use the profile of your GPU (kubectl describe node, Allocatable)";
}

bool namedExactlyInPolicy(const Policy& policy, std::string_view name) {
  return std::any_of(policy.gpuResources.begin(), policy.gpuResources.end(),
                     [&](const std::string& r) { return r == name && r.find('*') == std::string::npos; });
}

// Why `name` (whose lowercase form starts with "nvidia.com/mig") is not an
// advertised MIG resource, with the fix; nullopt when it is fine.
std::optional<std::string> problem(std::string_view name) {
  constexpr std::string_view kGrammar =
      "a MIG resource is nvidia.com/mig-<G>g.<GB>gb with an optional .me, .me.all, .gfx or -me suffix, e.g. "
      "nvidia.com/mig-1g.10gb";
  if (name.starts_with(kPrefix)) {
    if (auto p = parseProfile(name.substr(kPrefix.size()))) {
      if (!p->c) return std::nullopt;
      if (*p->c == p->g) {
        return "the device plugin names profiles whose compute and GPU slices are equal without the " +
               std::to_string(*p->c) + "c. part, so nothing advertises this name; write " + advertisedName(*p);
      }
      return "compute-instance profiles (" + std::to_string(*p->c) + "c." + std::to_string(p->g) +
             "g) are not advertised as resources, only whole GPU instances such as " + advertisedName(*p);
    }
  }
  // Fixable spellings: '+' for '.', upper case, a missing dash.
  std::string fixed = lowercase(name);
  std::replace(fixed.begin(), fixed.end(), '+', '.');
  if (!fixed.starts_with(kPrefix) && fixed.starts_with("nvidia.com/mig")) {
    fixed.insert(std::string("nvidia.com/mig").size(), "-");
  }
  std::optional<Profile> p;
  if (fixed.starts_with(kPrefix)) p = parseProfile(std::string_view(fixed).substr(kPrefix.size()));
  if (p) {
    const std::string right = advertisedName(*p);
    std::string why;
    if (name.find('+') != std::string_view::npos) {
      why = "the device plugin turns the profile's '+' into '.' (and the API server rejects '+' in Pods and "
            "workload templates)";
    } else if (lowercase(name) != name) {
      why = "resource names are case-sensitive and the device plugin advertises them in lower case";
    } else {
      why = "this is not the name the device plugin advertises";
    }
    return why + "; write " + right;
  }
  return "not a MIG profile the device plugin advertises: " + std::string(kGrammar);
}

// GKE MIG nodes: the partition size the pod's node selection requires in
// every term (cloud.google.com/gke-gpu-partition-size), when it does.
std::optional<std::string> gkePartitionSelected(const PodSite& site) {
  std::optional<std::string> size;
  bool anyTerm = false;
  for (const NodeTerm& term : nodeSelectionTerms(site)) {
    if (term.matchesNothing) continue;
    anyTerm = true;
    std::optional<std::string> here;
    for (const NodeRequirement& req : term.requirements) {
      if (req.key == "cloud.google.com/gke-gpu-partition-size" && (req.op == "In" || req.op == "Exists")) {
        here = req.values.empty() ? std::string("any") : joined(req.values, "/");
      }
    }
    if (!here) return std::nullopt;
    if (!size) size = here;
  }
  return anyTerm ? size : std::nullopt;
}

// Whether every term of the pod's node selection requires
// nvidia.com/mig.strategy=single (GFD's label of the device plugin's strategy).
bool requiresMigStrategySingle(const PodSite& site) {
  bool anyTerm = false;
  for (const NodeTerm& term : nodeSelectionTerms(site)) {
    if (term.matchesNothing) continue;
    anyTerm = true;
    bool single = false;
    for (const NodeRequirement& req : term.requirements) {
      if (req.key == "nvidia.com/mig.strategy" && req.op == "In" && !req.values.empty() &&
          std::all_of(req.values.begin(), req.values.end(), [](const std::string& v) { return v == "single"; })) {
        single = true;
      }
    }
    if (!single) return false;
  }
  return anyTerm;
}

class MigResourceName final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      const std::optional<std::string> gkePartition = gkePartitionSelected(site);
      const bool strategySingle = requiresMigStrategySingle(site);
      for (const ContainerRef& c : site.containers) {
        const ContainerResources& r = resourcesOf(c, false);
        for (const auto* list : {&r.limits, &r.requests}) {
          for (const ResourceEntry& e : *list) {
            if (!lowercase(e.name).starts_with("nvidia.com/mig") || namedExactlyInPolicy(ctx.policy, e.name)) continue;
            if (gkePartition) {
              out.report(e.path,
                         FieldError::invalid(quotedValue(e.name),
                                             "GKE exposes MIG partitions (cloud.google.com/gke-gpu-partition-size: " +
                                                 *gkePartition +
                                                 ") as nvidia.com/gpu, one per partition; no GKE node offers " +
                                                 e.name + ", so the pod stays Pending; ask for nvidia.com/gpu"),
                         e.name);
            } else if (auto why = problem(e.name)) {
              out.report(e.path, FieldError::invalid(quotedValue(e.name), *why), e.name);
            } else if (auto unoffered = unofferedProfile(*parseProfile(e.name.substr(kPrefix.size())))) {
              // A warning: a GPU newer than the profile list may offer it.
              out.reportWithDefault(e.path, FieldError::invalid(quotedValue(e.name), *unoffered), e.name, Severity::Warning);
            }
          }
        }
        checkMix(r, strategySingle, out);
      }
    }
  }

 private:
  static void checkMix(const ContainerResources& r, bool strategySingle, Reporter& out) {
    if (requestedUnits(r, "nvidia.com/gpu") <= 0) return;
    std::vector<std::string> migs;
    for (const auto* list : {&r.limits, &r.requests}) {
      for (const ResourceEntry& e : *list) {
        if (e.name.starts_with(kPrefix) && requestedUnits(r, e.name) > 0 &&
            std::find(migs.begin(), migs.end(), e.name) == migs.end()) {
          migs.push_back(e.name);
        }
      }
    }
    if (migs.empty()) return;
    std::string names;
    for (const std::string& m : migs) names += (names.empty() ? "" : ", ") + m;
    const std::string asks = "the container asks for whole GPUs (nvidia.com/gpu) and MIG slices (" + names + ")";
    if (strategySingle) {
      // The node selection requires strategy single: no node it admits advertises a slice.
      out.report(r.path, FieldError::invalid(quotedValue(names),
                                             asks + ", but its node selection requires nvidia.com/mig.strategy=single, "
                                                    "where the slices are advertised as nvidia.com/gpu and no node "
                                                    "has nvidia.com/mig-*, so the pod stays Pending; give the "
                                                    "container whole GPUs, or select strategy mixed"));
      return;
    }
    // The API server accepts it and strategy mixed nodes can run it (reference §9.4): a warning.
    out.reportWithDefault(r.path,
                          FieldError::note(asks + ": it schedules only on a node whose device plugin runs MIG "
                                                  "strategy mixed with a MIG-disabled GPU beside a free slice (with "
                                                  "strategy single no node advertises nvidia.com/mig-*); give the "
                                                  "container either whole GPUs or MIG slices unless such nodes exist"),
                          "", Severity::Warning);
  }
};

}  // namespace

std::unique_ptr<Rule> makeMigResourceName() { return std::make_unique<MigResourceName>(); }

}  // namespace gpuguard::checks
