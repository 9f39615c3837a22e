// gpu-label-value: node selection values for GPU labels that no node can
// carry, and YAML 1.1 traps in GPU quantities and GPU label values.
#include <array>
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "rules/checks/checks.h"
#include "rules/support/k8s_objects.h"
#include "rules/nvidia/gfd_labels.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/quantity.h"
#include "rules/k8s/names.h"
#include "text/templated.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuResources", "platform"};

constexpr RuleDoc kDoc{
    .id = "gpu-label-value",
    .defaultSeverity = Severity::Error,
    .summary = "A nodeSelector or node affinity value for a GPU label that no node carries, or a YAML 1.1 trap in "
               "a GPU quantity or label.",
    .description =
        "GPU Feature Discovery writes its labels in fixed formats (kubernetes-gpu-semantics §8): "
        "nvidia.com/cuda.driver-version.major is an integer (\"535\", never \"535.104\"), "
        "cuda.driver-version.full is the whole version (\"535.104.05\"), cuda.runtime-version.full is major.minor "
        "(\"12.4\"), gpu.memory is the NVML total in MiB (81920 for an A100 80GB, about 81559 for an H100 80GB, "
        "never \"80GB\"), gpu.count and the other counts are integers, gpu.product is the NVML name with "
        "whitespace replaced by '-' (\"NVIDIA-A100-SXM4-80GB\"), gpu.family is one of tesla, fermi, kepler, "
        "maxwell, pascal, volta, turing, ampere, ada-lovelace, hopper, blackwell, rubin, undefined, and the "
        "boolean labels are \"true\" or \"false\". A nodeSelector or node affinity In/NotIn value in another format "
        "matches no node: the pod stays Pending (an In) or excludes nothing (a NotIn). A value that is not a "
        "valid label value at all (spaces, more than 63 characters) is rejected by the API server in Pods and "
        "workloads and silently kept in custom resources. Checked keys: nvidia.com/*, "
        "cloud.google.com/gke-accelerator and karpenter.k8s.aws/instance-gpu-*; template placeholders "
        "(${X}, $(X), {{ x }}) are skipped. Gt/Lt values are node-affinity-gt-lt's business. "
        "The YAML part needs the linter (which knows how a scalar was written; the webhook does not): kubectl "
        "reads YAML 1.1, where an unquoted 010 is the octal number 8, 0x10 is 16, 1_0 is 10 and yes, on, y are "
        "the boolean true. In a GPU quantity (nvidia.com/gpu: 010) that silently asks for another count, which the "
        "API server accepts: the object is valid and only its author knows what was meant, so that is a warning "
        "(a boolean quantity, which the API server rejects, stays an error); in a GPU label value it is a "
        "different value than written, and a label value must be a string, so the API server rejects it (an "
        "error). kubectl's YAML reader (go-yaml v2) knows no sexagesimal numbers: 1:30 stays the string \"1:30\". Values written as plain numbers or booleans "
        "that read as written (535, true) are left to label-value-not-string.",
    .remediation =
        "Write the value the way GFD does (driver-version.major: \"535\", gpu.memory in MiB, product names "
        "with '-'), and quote anything that YAML 1.1 could read as another number or a boolean.",
    .wrongExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"535.104\"\n"
        "    nvidia.com/gpu.product: \"NVIDIA A100-SXM4-80GB\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 010\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"535\"\n"
        "    nvidia.com/gpu.product: \"NVIDIA-A100-SXM4-80GB\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 10\n",
    .policyKeys = kPolicyKeys,
};

bool isGpuLabel(std::string_view key) {
  return key.starts_with("nvidia.com/") || key == "cloud.google.com/gke-accelerator" ||
         key == "cloud.google.com/gke-accelerator-count" || key.starts_with("karpenter.k8s.aws/instance-gpu-");
}

bool allDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "535.104.05" -> {"535", "104", "05"}; false when a part is not digits.
bool dottedDigits(std::string_view s, std::size_t minParts, std::size_t maxParts) {
  std::size_t parts = 0, pos = 0;
  while (true) {
    const std::size_t dot = s.find('.', pos);
    const std::string_view part = s.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    if (!allDigits(part)) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
  }
  return parts >= minParts && parts <= maxParts;
}

// GFD's sanitise(): characters outside [A-Za-z0-9-_. ] dropped, whitespace
// runs replaced by '-'.
std::string gfdSanitised(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) continue;
    if (space && !out.empty()) out += '-';
    space = false;
    out += c;
  }
  return out;
}

// How YAML 1.1 turned the written text into the value, when that is not what
// the text says in decimal (010 -> 8, 0x10 -> 16, yes -> true). nullopt: no trap.
std::optional<std::string> yamlTrap(const std::string& written, const json& value) {
  if (value.is_boolean()) {
    const std::string l = lowercase(written);
    if (l == "true" || l == "false") return std::nullopt;
    return std::string("the boolean ") + (value.get<bool>() ? "true" : "false");
  }
  if (!value.is_number()) return std::nullopt;
  const auto asWritten = Quantity::parse(written);
  const auto read = decodeQuantity(value).quantity;
  if (asWritten && read && *asWritten == *read) return std::nullopt;
  std::string body = written;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) body.erase(0, 1);
  std::string kind = "the number";
  if (body.starts_with("0x") || body.starts_with("0X")) kind = "the hexadecimal number";
  else if (body.starts_with("0b") || body.starts_with("0B")) kind = "the binary number";
  else if (body.starts_with("0o") || body.starts_with("0O") || (body.size() > 1 && body[0] == '0' && allDigits(body))) {
    kind = "the octal number";
  } else if (body.find('_') != std::string::npos) {
    kind = "(with '_' dropped) the number";
  }
  return kind + " " + renderValue(value);
}

class GpuLabelValue final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    checkNodeSelection(ctx, out);
    checkQuantities(ctx, out);
  }

 private:
  // --- GPU quantities -----------------------------------------------------

  static void checkQuantities(const CheckContext& ctx, Reporter& out) {
    for (const PodSite& site : ctx.sites) {
      for (const ContainerRef& c : site.containers) {
        const ContainerResources& r = resourcesOf(c, false);
        for (const auto* list : {&r.limits, &r.requests}) {
          for (const ResourceEntry& e : *list) {
            if (!ctx.policy.isGpuResource(e.name)) continue;
            const std::string* written = ctx.writtenText(e.path);
            if (!written) continue;
            const auto trap = yamlTrap(*written, *e.value);
            if (!trap) continue;
            const std::string shown = renderValue(*e.value);
            std::string fix;
            if (e.value->is_boolean()) {
              fix = "write the number of GPUs (a quantity is never a boolean)";
            } else if (const auto asWritten = Quantity::parse(*written)) {
              fix = "write " + asWritten->canonical() + " (what " + *written + " says in decimal) or " + shown +
                    " (what YAML reads), in plain decimal";
            } else {
              fix = "write " + shown + " in plain decimal";
            }
            // A number the API server accepts: the object is valid, and only
            // its author knows whether 8 was meant (a warning). A boolean
            // is no quantity: the API server rejects it (an error).
            out.reportWithDefault(e.path,
                                  FieldError::invalid(shown, "YAML 1.1 (which kubectl reads) turns the unquoted " +
                                                                 *written + " into " + *trap + ", so the pod asks for " +
                                                                 (e.value->is_boolean() ? "a boolean, not a GPU count"
                                                                                        : shown + " " + e.name) +
                                                                 "; " + fix),
                                  shown, e.value->is_boolean() ? Severity::Error : Severity::Warning);
          }
        }
      }
    }
  }

  // --- label values in node selection ------------------------------------

  // The nodeSelectors (a map of labels, or a NodeSelector with
  // nodeSelectorTerms: DRA, PersistentVolume) and node affinities anywhere in
  // the object; one inside another is judged with the outer one.
  static bool judgedHere(const LabelField& field) {
    return (field.kind == LabelField::Kind::NodeSelector || field.kind == LabelField::Kind::NodeAffinity) &&
           field.value->is_object();
  }

  static void checkNodeSelection(const CheckContext& ctx, Reporter& out) {
    const LabelFields& fields = ctx.labelFields();
    for (const LabelField& field : fields.all()) {
      if (!judgedHere(field) || fields.insideAny(field, judgedHere)) continue;
      if (field.kind == LabelField::Kind::NodeAffinity) checkNodeAffinity(ctx, *field.value, field.path, out);
      else checkNodeSelector(ctx, *field.value, field.path, out);
    }
  }

  static void checkNodeSelector(const CheckContext& ctx, const json& selector, const FieldPath& path, Reporter& out) {
    if (auto terms = selector.find("nodeSelectorTerms"); terms != selector.end()) {
      checkTerms(ctx, *terms, path.field("nodeSelectorTerms"), out);  // a NodeSelector (DRA, PV)
      return;
    }
    for (const auto& [label, value] : selector.items()) {
      if (noNodeHasLabel(ctx, label)) reportMissingLabel(ctx, label, value, path.key(label), out);
      else checkValue(ctx, label, value, path.key(label), out);
    }
  }

  static void checkNodeAffinity(const CheckContext& ctx, const json& na, const FieldPath& path, Reporter& out) {
    for (const char* name : {"requiredDuringSchedulingIgnoredDuringExecution", "required"}) {
      auto req = na.find(name);
      if (req == na.end() || !req->is_object()) continue;
      if (auto terms = req->find("nodeSelectorTerms"); terms != req->end()) {
        checkTerms(ctx, *terms, path.field(name).field("nodeSelectorTerms"), out);
      }
    }
    auto pref = na.find("preferredDuringSchedulingIgnoredDuringExecution");
    if (pref == na.end() || !pref->is_array()) return;
    const FieldPath prefPath = path.field("preferredDuringSchedulingIgnoredDuringExecution");
    for (std::size_t i = 0; i < pref->size(); ++i) {
      if (!(*pref)[i].is_object()) continue;
      auto p = (*pref)[i].find("preference");
      if (p != (*pref)[i].end() && p->is_object()) checkTerm(ctx, *p, prefPath.index(i).field("preference"), out);
    }
  }

  static void checkTerms(const CheckContext& ctx, const json& terms, const FieldPath& path, Reporter& out) {
    if (!terms.is_array()) return;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      if (terms[i].is_object()) checkTerm(ctx, terms[i], path.index(i), out);
    }
  }

  static void checkTerm(const CheckContext& ctx, const json& term, const FieldPath& path, Reporter& out) {
    auto exprs = term.find("matchExpressions");
    if (exprs == term.end() || !exprs->is_array()) return;
    for (std::size_t j = 0; j < exprs->size(); ++j) {
      const json& e = (*exprs)[j];
      if (!e.is_object()) continue;
      auto key = e.find("key");
      auto op = e.find("operator");
      auto values = e.find("values");
      if (key == e.end() || !key->is_string() || values == e.end() || !values->is_array()) continue;
      const bool membership = op != e.end() && (*op == "In" || *op == "NotIn");
      const FieldPath valuesPath = path.field("matchExpressions").index(j).field("values");
      if (op != e.end() && *op == "In" && !values->empty() && noNodeHasLabel(ctx, key->get<std::string>())) {
        reportMissingLabel(ctx, key->get<std::string>(), (*values)[0], valuesPath.index(0), out);
        continue;
      }
      for (std::size_t k = 0; k < values->size(); ++k) {
        // Gt/Lt values: only the YAML trap here, their format is node-affinity-gt-lt's.
        if (membership || !(*values)[k].is_string()) {
          checkValue(ctx, key->get<std::string>(), (*values)[k], valuesPath.index(k), out);
        }
      }
    }
  }

  // On a platform without GPU Feature Discovery (policy gfdLabels false,
  // platform eks-auto-mode) no node carries an nvidia.com/ label.
  static bool noNodeHasLabel(const CheckContext& ctx, const std::string& key) {
    return !ctx.policy.gfdLabels && key.starts_with("nvidia.com/");
  }

  static void reportMissingLabel(const CheckContext& ctx, const std::string& key, const json& value,
                                 const FieldPath& path, Reporter& out) {
    const std::string shown = renderValue(value);
    out.report(path,
               FieldError::invalid(shown,
                                   "the platform (" + ctx.policy.platform +
                                       ") runs no GPU Feature Discovery, so no node carries " + key +
                                       " and this selects no node: the pod stays Pending; select a label the "
                                       "platform sets "
                                       "(eks.amazonaws.com/instance-gpu-name, karpenter.sh/nodepool), or deploy GFD "
                                       "and declare " "platform: eks"),
               shown);
  }

  static void checkValue(const CheckContext& ctx, const std::string& key, const json& value, const FieldPath& path,
                         Reporter& out) {
    if (!isGpuLabel(key)) return;

    if (!value.is_string()) {
      const std::string* written = ctx.writtenText(path);
      if (!written) return;
      const auto trap = yamlTrap(*written, value);
      if (!trap) return;
      const std::string shown = renderValue(value);
      std::string fix = "quote it: \"" + *written + "\"";
      if (labelFormat(key) == LabelFormat::Boolean && value.is_boolean()) {
        fix = std::string("write \"") + (value.get<bool>() ? "true" : "false") + "\" (GFD writes \"true\"/\"false\")";
      }
      out.report(path,
                 FieldError::invalid(shown,
                                     "YAML 1.1 (which kubectl reads) turns the unquoted " + *written + " into " +
                                         *trap + ", not the text " + *written + "; " + fix),
                 shown);
      return;
    }
    const std::string& s = value.get_ref<const std::string&>();
    if (text::looksTemplated(s)) return;
    if (const std::optional<std::string> problem = labelValueProblem(key, s)) {
      // Rendered only when reported: most values are fine.
      const std::string shown = renderValue(value);
      out.report(path, FieldError::invalid(shown, *problem), shown);
    } else if (const std::optional<std::string> unusual = unusualGfdValue(key, s)) {
      // A warning: GFD releases may add values (a new mode, a new product
      // naming) before this list knows them.
      const std::string shown = renderValue(value);
      out.reportWithDefault(path, FieldError::invalid(shown, *unusual), shown, Severity::Warning);
    }
  }

  // Values GFD (device plugin v0.20.0, internal/lm) never writes, though
  // they are valid label values: gpu.mode is compute, graphics or unknown
  // (newGPUModeLabeler); gpu.product is the sanitised NVML name, which has
  // upper-case letters and no '_' (reference §14.8). Its brand prefix is
  // not a rule: drivers of 2020 named the A100 "A100-SXM4-40GB".
  static std::optional<std::string> unusualGfdValue(const std::string& key, const std::string& s) {
    if (key == "nvidia.com/gpu.mode") {
      if (s == "compute" || s == "graphics" || s == "unknown") return std::nullopt;
      const std::string lower = lowercase(s);
      const bool caseOnly = lower == "compute" || lower == "graphics" || lower == "unknown";
      return "GFD writes nvidia.com/gpu.mode as compute (a 3D controller), graphics (a VGA controller) or unknown, "
             "so this matches no node" + (caseOnly ? "; write \"" + lower + "\"" : std::string()) +
             (lower == "display" ? "; a GPU that drives a display is graphics" : "");
    }
    if (key != "nvidia.com/gpu.product" || s.empty()) return std::nullopt;
    const bool hasUpper = std::any_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (!hasUpper) {
      return std::string("GFD writes the NVML product name, with its upper-case letters (\"NVIDIA-A100-SXM4-80GB\", "
                         "\"Tesla-T4\"), and label values are case-sensitive, so this matches no node");
    }
    if (s.find('_') != std::string::npos) {
      std::string dashed = s;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      return "NVML product names have no '_' (GFD turns their spaces into '-'), so this matches no node; did you "
             "mean \"" + dashed + "\"?";
    }
    return std::nullopt;
  }

  // What is wrong with the string value `s` of GPU label `key`, as it follows
  // "Invalid value: <value>: " in the finding; nullopt when nothing is.
  static std::optional<std::string> labelValueProblem(const std::string& key, const std::string& s) {
    if (!isValidLabelValue(s)) {
      std::string message = "not a valid label value (at most 63 characters: alphanumerics, '-', '_' or '.', starting "
                            "and ending with an alphanumeric), so no node carries it";
      if (key == "nvidia.com/gpu.product" || key.ends_with(".product")) {
        const std::string fixed = gfdSanitised(s);
        message += "; GFD writes product names with whitespace replaced by '-'";
        if (!fixed.empty() && isValidLabelValue(fixed)) message += ": \"" + fixed + "\"";
      } else {
        message += "; write the value exactly as the node's label holds it";
      }
      return message;
    }

    switch (labelFormat(key)) {
      case LabelFormat::Integer:
        if (!isCanonicalUnsigned(s)) return integerAdvice(key, s);
        break;
      case LabelFormat::DriverVersion:
        if (!dottedDigits(s, 2, 3)) {
          return "GFD writes " + key + " as the whole driver version (\"550.107.02\"), so this matches no node" +
                 (allDigits(s) ? "; to select by major version use nvidia.com/cuda.driver-version.major: \"" + s + "\""
                               : "");
        }
        break;
      case LabelFormat::RuntimeVersion:
        if (!dottedDigits(s, 2, 2)) {
          std::string m = "GFD writes " + key +
                          " as major.minor (\"12.5\", the newest CUDA the driver supports), so this matches no node";
          if (dottedDigits(s, 3, 3)) m += "; write \"" + s.substr(0, s.rfind('.')) + "\"";
          else if (allDigits(s)) m += "; to select by major version use nvidia.com/cuda.runtime-version.major: \"" + s + "\"";
          return m;
        }
        break;
      case LabelFormat::Boolean:
        if (s != "true" && s != "false") {
          const std::string l = lowercase(s);
          const bool yes = l == "true" || l == "yes" || l == "y" || l == "on" || l == "1";
          const bool no = l == "false" || l == "no" || l == "n" || l == "off" || l == "0";
          return "GFD writes " + key + " as \"true\" or \"false\" (label values are case-sensitive), so this matches no "
                 "node" + std::string(yes ? "; write \"true\"" : no ? "; write \"false\"" : "");
        }
        break;
      case LabelFormat::Enumerated: {
        const auto& allowed = enumeratedValues(key);
        if (allowed.empty() || std::find(allowed.begin(), allowed.end(), s) != allowed.end()) break;
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        const std::string l = lowercase(s);
        const bool caseOnly = std::find(allowed.begin(), allowed.end(), l) != allowed.end();
        return "GFD writes one of " + list + " in " + key + " (label values are case-sensitive), so this matches no node" +
               (caseOnly ? "; write \"" + l + "\"" : "");
      }
      default: break;
    }
    return std::nullopt;
  }

  static std::string integerAdvice(const std::string& key, const std::string& s) {
    const std::string base = "GFD writes " + key + " as a decimal integer, so this matches no node";
    if (isDriverMajorLabel(key) || isRuntimeMajorLabel(key)) {
      if (dottedDigits(s, 2, 3)) {
        const std::string major = s.substr(0, s.find('.'));
        const bool driver = isDriverMajorLabel(key);
        return base + "; it holds the major version alone: \"" + major + "\"" +
               (driver ? "; to pin the whole version use nvidia.com/cuda.driver-version.full with the complete "
                         "version (\"535.104.05\")"
                       : "; to pin major.minor use nvidia.com/cuda.runtime-version.full: \"" +
                             s.substr(0, s.find('.', s.find('.') + 1)) + "\"");
      }
    }
    if (key == "nvidia.com/gpu.memory" || key.ends_with(".memory")) {
      return base + " (the total memory in MiB as NVML reports it, e.g. 81920 for an A100 80GB, about 81559 for an "
                    "H100 80GB, 15360 for a T4), not a size with a unit; select the GPU model with "
                    "nvidia.com/gpu.product, or use a node affinity with Gt on the MiB value";
    }
    if (allDigits(s) && s.size() <= 18) return base + " without leading zeros: \"" + std::to_string(std::stoll(s)) + "\"";
    return base + " (e.g. \"8\")";
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuLabelValue() { return std::make_unique<GpuLabelValue>(); }

}  // namespace gpuguard::checks
