// node-affinity-gt-lt: node affinity requirements the API server rejects
// (operators that do not exist, values that do not fit the operator) and
// Gt/Lt that can never match.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/nvidia/gfd_labels.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/names.h"
#include "text/templated.h"
#include "text/ascii.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

constexpr RuleDoc kDoc{
    .id = "node-affinity-gt-lt",
    .defaultSeverity = Severity::Error,
    .summary = "A node affinity requirement the API server rejects (an operator that does not exist, values that "
               "do not fit the operator) or a Gt/Lt that can never match.",
    .description =
        "Node affinity matchExpressions know six operators: In, NotIn, Exists, DoesNotExist, Gt and Lt. There is "
        "no Gte, Lte, Ge, Equals, and operators are case-sensitive (in is not In): the API server rejects them in "
        "Pods and workloads (\"not a valid selector operator\"), but stores them inside custom resources, whose "
        "operator then fails to create pods. Each operator fixes its values (ValidateNodeSelectorRequirement): "
        "In and NotIn need at least one (\"values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn'\"), Exists and DoesNotExist take none (\"values: Forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'\"), Gt and Lt exactly one; in a required term every value must "
        "also be a label value, so \"+40000\" or \"-1\" are rejected there even though they parse as integers "
        "(preferred terms may hold any value). Gt and Lt compare integers: both the value and the node's label "
        "must parse with strconv.ParseInt(s, 10, 64). A value such as \"12.4\" or "
        "\"535.104.05\" is a valid label value, so the API server accepts it, but the scheduler cannot parse the "
        "requirement and the term silently never matches: the pod stays Pending with \"node(s) didn't match "
        "Pod's node affinity/selector\". The same happens when the label's values are not integers: GPU Feature "
        "Discovery writes nvidia.com/cuda.driver-version.full (\"550.107.02\"), cuda.runtime-version.full "
        "(\"12.5\"), gpu.product, gpu.family, gpu.machine, mig.strategy and the boolean labels as text. Keys the "
        "rule does not know are judged by their value only. Gt and Lt are strict: \"at least 535\" is Gt \"534\". "
        "Required and preferred terms are both checked (a preferred term that never matches is silently "
        "useless). The label values of In/NotIn are gpu-label-value's business.",
    .remediation =
        "Use Gt/Lt with one integer value on an integer label (nvidia.com/cuda.driver-version.major Gt \"534\" "
        "for driver >= 535), In/NotIn with at least one value for text labels, Exists/DoesNotExist without "
        "values, and write operators exactly as Kubernetes spells them.",
    .wrongExample =
        "spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - key: nvidia.com/cuda.driver-version.full\n            operator: Gte\n"
        "            values: [\"535.104.05\"]\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n",
    .rightExample =
        "spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - key: nvidia.com/cuda.driver-version.major\n            operator: Gt\n"
        "            values: [\"534\"]\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n",
};

// What happens to a requirement ValidateNodeSelectorRequirement rejects.
constexpr std::string_view kRejected =
    "the API server rejects the object (a custom resource keeps it, and its pods never get created)";
constexpr long long kSaneBound = 1'000'000'000'000'000LL;
constexpr std::array<std::string_view, 6> kOperators{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

// The single integer value of an expression, when it has one.
std::optional<long long> singleInteger(const json& e) {
  auto values = e.find("values");
  if (values == e.end() || !values->is_array() || values->size() != 1) return std::nullopt;
  const json& v = values->front();
  if (v.is_string()) return parseGoInt(v.get<std::string>());
  if (v.is_number_integer()) return v.get<long long>();
  return std::nullopt;
}

// What to write instead of an operator that does not exist.
std::string operatorFix(std::string_view op, const json& expression) {
  const std::string l = text::asciiLowercase(op);
  const std::optional<long long> parsed = singleInteger(expression);
  // No arithmetic near the int64 limits. (Plain values, not a reset optional:
  // GCC 12 warns -Wmaybe-uninitialized on the latter at -O2.)
  const bool known = parsed && *parsed <= kSaneBound && *parsed >= -kSaneBound;
  const long long n = known ? *parsed : 0;
  if (l == "gte" || l == "ge" || l == ">=" || l == "greaterthanorequal" || l == "greaterorequal") {
    return known ? "write operator Gt with values [\"" + std::to_string(n - 1) + "\"] (Gt is strict: Gt \"" +
                   std::to_string(n - 1) + "\" admits " + std::to_string(n) + " and above)"
             : "write Gt with one integer one below the bound (\">= 535\" is Gt \"534\")";
  }
  if (l == "lte" || l == "le" || l == "<=" || l == "lessthanorequal" || l == "lessorequal") {
    return known ? "write operator Lt with values [\"" + std::to_string(n + 1) + "\"] (Lt is strict: Lt \"" +
                   std::to_string(n + 1) + "\" admits " + std::to_string(n) + " and below)"
             : "write Lt with one integer one above the bound (\"<= 550\" is Lt \"551\")";
  }
  if (l == "greaterthan" || l == ">") return "write Gt";
  if (l == "lessthan" || l == "<") return "write Lt";
  if (l == "equals" || l == "equal" || l == "eq" || l == "=" || l == "==" || l == "is") return "write In";
  if (l == "notequals" || l == "notequal" || l == "ne" || l == "!=" || l == "not") return "write NotIn";
  if (l == "exist" || l == "present") return "write Exists";
  if (l == "notexists" || l == "doesnotexists" || l == "absent") return "write DoesNotExist";
  for (std::string_view known : kOperators) {
    if (text::asciiLowercase(known) == l) return "operators are case-sensitive: write " + std::string(known);
  }
  return "use In, NotIn, Exists, DoesNotExist, Gt or Lt";
}

// A non-integer Gt/Lt value rewritten as the integer bound it probably means.
std::string valueFix(std::string_view op, std::string_view value) {
  // "12.4" or "535.104.05": the leading integer part.
  std::size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
  if (digits > 0 && digits < 16 && digits < value.size() && value[digits] == '.') {
    const long long whole = std::stoll(std::string(value.substr(0, digits)));
    if (op == "Gt") {
      return "write an integer: Gt \"" + std::to_string(whole) + "\" admits " + std::to_string(whole + 1) +
             " and above, Gt \"" + std::to_string(whole - 1) + "\" admits " + std::to_string(whole) + " and above";
    }
    return "write an integer: Lt \"" + std::to_string(whole + 1) + "\" admits " + std::to_string(whole) +
           " and below";
  }
  return "write one integer (\"at least 535\" is Gt \"534\")";
}

// For a label whose values are not integers: an example value and what to use.
struct TextLabelAdvice {
  std::string example;
  std::string instead;
};
TextLabelAdvice adviceFor(std::string_view key) {
  if (key == "nvidia.com/cuda.driver-version.full") {
    return {"550.107.02", "compare the major version: nvidia.com/cuda.driver-version.major Gt \"534\" for >= 535"};
  }
  if (key == "nvidia.com/vgpu.host-driver-version") return {"550.54.16", "use In with the exact versions"};
  if (key == "nvidia.com/cuda.runtime-version.full") {
    return {"12.5", "compare nvidia.com/cuda.runtime-version.major (and .minor), e.g. Gt \"11\" for CUDA 12 and newer"};
  }
  if (key == "nvidia.com/gpu.product" || key.ends_with(".product")) {
    return {"NVIDIA-A100-SXM4-80GB",
            "use In with the product names, or Gt on an integer label such as nvidia.com/gpu.memory (MiB) or "
            "nvidia.com/gpu.compute.major"};
  }
  if (key == "nvidia.com/gpu.family") {
    return {"ampere", "use In with the families, or nvidia.com/gpu.compute.major Gt \"7\" for Ampere and newer"};
  }
  switch (labelFormat(key)) {
    case LabelFormat::Boolean: return {"true", "use In [\"true\"] or Exists"};
    case LabelFormat::Enumerated:
      return {std::string(enumeratedValues(key).empty() ? "none" : enumeratedValues(key).front()), "use In/NotIn"};
    default: return {"", "use In/NotIn"};
  }
}

class NodeAffinityGtLt final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    const LabelFields& fields = ctx.labelFields();
    for (const LabelField& field : fields.all()) {
      if (judgedHere(field) && !fields.insideAny(field, judgedHere)) checkNodeAffinity(*field.value, field.path, out);
    }
  }

 private:
  // Node affinities anywhere in the object (pods, pod templates, PersistentVolumes, custom resources).
  static bool judgedHere(const LabelField& field) {
    return field.kind == LabelField::Kind::NodeAffinity && field.value->is_object();
  }

  // Required terms must hold valid label values; preferred ones may hold
  // anything (ValidatePreferredSchedulingTerms: "we always allow invalid
  // label-value for preferred affinity").
  // Where a term sits decides what a term that never matches costs: the only required term keeps
  // the pod Pending; one of several ORed required terms only closes that way in (kube-scheduler
  // binds through another term, as the scheduler oracle shows); a preferred term is just useless.
  enum class Strictness { Required, RequiredOred, Preferred };

  static std::string_view neverMatchingCost(Strictness strictness) {
    switch (strictness) {
      case Strictness::Required: return "the pod stays Pending";
      case Strictness::RequiredOred: return "the pod can only land on a node that another term matches";
      case Strictness::Preferred: return "the preference never applies";
    }
    return "";
  }

  static void checkTerms(const json& terms, const FieldPath& path, Reporter& out) {
    if (!terms.is_array()) return;
    const Strictness strictness = terms.size() > 1 ? Strictness::RequiredOred : Strictness::Required;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      if (terms[i].is_object()) checkTerm(terms[i], path.index(i), strictness, out);
    }
  }

  static void checkTerm(const json& term, const FieldPath& path, Strictness strictness, Reporter& out) {
    auto exprs = term.find("matchExpressions");
    if (exprs == term.end() || !exprs->is_array()) return;
    const FieldPath exprsPath = path.field("matchExpressions");
    for (std::size_t j = 0; j < exprs->size(); ++j) {
      if ((*exprs)[j].is_object()) checkExpression((*exprs)[j], exprsPath.index(j), strictness, out);
    }
  }

  static void checkNodeAffinity(const json& na, const FieldPath& path, Reporter& out) {
    // Pods: requiredDuringScheduling... / preferredDuringScheduling...;
    // PersistentVolume: required.
    for (const char* name : {"requiredDuringSchedulingIgnoredDuringExecution", "required"}) {
      auto req = na.find(name);
      if (req == na.end() || !req->is_object()) continue;
      if (auto terms = req->find("nodeSelectorTerms"); terms != req->end()) {
        checkTerms(*terms, path.field(name).field("nodeSelectorTerms"), out);
      }
    }
    auto pref = na.find("preferredDuringSchedulingIgnoredDuringExecution");
    if (pref != na.end() && pref->is_array()) {
      const FieldPath prefPath = path.field("preferredDuringSchedulingIgnoredDuringExecution");
      for (std::size_t i = 0; i < pref->size(); ++i) {
        if (!(*pref)[i].is_object()) continue;
        auto p = (*pref)[i].find("preference");
        if (p != (*pref)[i].end() && p->is_object()) {
          checkTerm(*p, prefPath.index(i).field("preference"), Strictness::Preferred, out);
        }
      }
    }
  }

  // ValidateNodeSelectorRequirement, operator by operator.
  static void checkExpression(const json& e, const FieldPath& path, Strictness strictness, Reporter& out) {
    auto opIt = e.find("operator");
    if (opIt == e.end() || !opIt->is_string()) return;
    const std::string& op = opIt->get_ref<const std::string&>();
    if (op == "In" || op == "NotIn") return checkValuesGiven(e, path, op, out);
    if (op == "Exists" || op == "DoesNotExist") return checkNoValues(e, path, op, out);
    if (op == "Gt" || op == "Lt") return checkGtLt(e, path, op, strictness, out);
    out.report(path.field("operator"),
               FieldError::invalid(renderValue(*opIt),
                                   "not a valid selector operator (valid: \"In\", \"NotIn\", \"Exists\", "
                                       "\"DoesNotExist\", \"Gt\", \"Lt\"), so " + std::string(kRejected) + "; " +
                                       operatorFix(op, e)),
               renderValue(*opIt));
  }

  // In and NotIn: at least one value. (A `values` that is not a list fails to
  // decode: label-value-not-string's and the decoder's business.)
  static void checkValuesGiven(const json& e, const FieldPath& path, const std::string& op, Reporter& out) {
    auto values = e.find("values");
    const bool absent = values == e.end() || values->is_null();
    if (!absent && !(values->is_array() && values->empty())) return;
    out.report(path.field("values"),
               FieldError::required("must be specified when `operator` is 'In' or 'NotIn', so " +
                                        std::string(kRejected) + "; " +
                                        (op == "In" ? "list the label values to match, or use Exists to match any value"
                                                    : "list the label values to exclude, or use DoesNotExist to "
                                                      "exclude every value")),
               absent ? "" : renderValue(*values));
  }

  // Exists and DoesNotExist: no values (an empty list is no values).
  static void checkNoValues(const json& e, const FieldPath& path, const std::string& op, Reporter& out) {
    auto values = e.find("values");
    if (values == e.end() || !values->is_array() || values->empty()) return;
    out.report(path.field("values"),
               FieldError::forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist', so " +
                                         std::string(kRejected) + "; " +
                                         (op == "Exists" ? "remove values to match any value of the label, or write "
                                                           "In to match these"
                                                         : "remove values to exclude every value of the label, or "
                                                           "write NotIn to exclude these")),
               renderValue(*values));
  }

  static void checkGtLt(const json& e, const FieldPath& path, const std::string& op, Strictness strictness,
                        Reporter& out) {
    auto keyIt = e.find("key");
    const std::string key = keyIt != e.end() && keyIt->is_string() ? keyIt->get<std::string>() : "";

    // The label's values must be integers.
    const LabelFormat format = labelFormat(key);
    if (format != LabelFormat::Unknown && format != LabelFormat::Integer) {
      const TextLabelAdvice advice = adviceFor(key);
      out.report(path.field("key"),
                 FieldError::invalid(renderValue(json(key)),
                                     op + " compares integers, but the node's " + key + " label is not one" +
                                         (advice.example.empty() ? "" : " (\"" + advice.example + "\")") +
                                         ", so this requirement never matches any node and " +
                                         std::string(neverMatchingCost(strictness)) + "; " + advice.instead),
                 renderValue(json(key)));
      return;  // the fix changes the key, and the value with it
    }

    // Exactly one integer value.
    auto values = e.find("values");
    const FieldPath valuesPath = path.field("values");
    if (values == e.end() || !values->is_array() || values->size() != 1) {
      const std::size_t n = values != e.end() && values->is_array() ? values->size() : 0;
      out.report(valuesPath,
                 FieldError::required(op + " takes exactly one value, found " + std::to_string(n) +
                                          " (\"must be specified single value when `operator` is 'Lt' or 'Gt'\"), "
                                          "so " + std::string(kRejected) +
                                          "; write values: [\"<integer>\"] (\"at least 535\" is Gt \"534\")"),
                 values == e.end() ? "" : renderValue(*values));
      return;
    }
    const json& v = values->front();
    std::string text;
    if (v.is_string()) {
      text = v.get<std::string>();
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::floor(d) == d) return;  // a whole number: label-value-not-string's business
      text = renderValue(v);
    } else {
      return;  // integers and booleans: label-value-not-string reports the type
    }
    if (text::looksTemplated(text)) return;
    if (strictness != Strictness::Preferred && v.is_string()) {
      // "+40000" and "-1" parse as integers but are not label values.
      const std::vector<std::string> errors = labelValueErrors(text);
      if (!errors.empty()) return reportNotALabelValue(valuesPath.index(0), op, text, errors, out);
    }
    if (parseGoInt(text)) return;
    out.report(valuesPath.index(0),
               FieldError::invalid(renderValue(v),
                                   op + " compares integers (strconv.ParseInt), so the scheduler cannot parse this "
                                       "requirement and the term silently never matches any node: " +
                                       std::string(neverMatchingCost(strictness)) + "; " + valueFix(op, text)),
               renderValue(v));
  }

  static void reportNotALabelValue(const FieldPath& path, std::string_view op, const std::string& text,
                                   const std::vector<std::string>& errors, Reporter& out) {
    const std::string message = joined(errors, "; ");
    const std::string shown = renderValue(json(text));
    std::string fix;
    if (text.starts_with("+") && parseGoInt(text)) {
      fix = "write " + renderValue(json(text.substr(1))) + " without the sign";
    } else if (text.starts_with("-") && parseGoInt(text)) {
      fix = "node label values are never negative either: write a bound of 0 or more, or use Exists to admit every "
            "value";
    } else {
      fix = valueFix(op, text);
    }
    out.report(path,
               FieldError::invalid(shown,
                                   message + " (values of a required node affinity must be label values), so " +
                                       std::string(kRejected) + "; " + fix),
               shown);
  }
};

}  // namespace

std::unique_ptr<Rule> makeNodeAffinityGtLt() { return std::make_unique<NodeAffinityGtLt>(); }

}  // namespace gpuguard::checks
