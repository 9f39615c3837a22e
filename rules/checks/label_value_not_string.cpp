// label-value-not-string: a nodeSelector, label, annotation or toleration
// value written as a number or a boolean.
#include "rules/checks/checks.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

constexpr RuleDoc kDoc{
    .id = "label-value-not-string",
    .defaultSeverity = Severity::Error,
    .summary = "A nodeSelector, label, selector, annotation or toleration value written as a YAML number or boolean.",
    .description =
        "nodeSelector, labels, annotations and matchLabels are maps of strings, and toleration keys and values are "
        "strings. kubectl reads YAML 1.1, so an unquoted 535 is "
        "a number, true/yes/on are booleans and 010 is the octal number 8. The API server rejects the whole "
        "object while decoding it (\"cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of "
        "type string\", HTTP 400) before any admission webhook runs; inside a custom resource the value is "
        "stored as is and the operator fails when it builds the pod. A typical GPU trap: "
        "nodeSelector: {nvidia.com/cuda.driver-version.major: 535}.",
    .remediation = "Quote the value: \"535\", \"true\".",
    .wrongExample = "nodeSelector:\n  nvidia.com/cuda.driver-version.major: 535\n",
    .rightExample = "nodeSelector:\n  nvidia.com/cuda.driver-version.major: \"535\"\n",
};

constexpr int kMaxDepth = 64;

class LabelValueNotString final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override { walk(ctx, ctx.object, PathTrail{}, 0, out); }

 private:
  static bool isScalarNonString(const json& v) { return v.is_number() || v.is_boolean(); }

  static void report(const CheckContext& ctx, const PathTrail& at, const json& v, Reporter& out) {
    const FieldPath path = at.toFieldPath();
    const std::string shown = renderValue(v);
    const std::string* written = ctx.writtenText(path);
    const std::string text = written ? *written : shown;
    std::string detail = "must be a string; the API server cannot decode a " +
                         std::string(v.is_boolean() ? "bool" : "number") + " here and rejects the object; write \"" +
                         text + "\"";
    if (written && *written != shown) {
      detail += " (YAML 1.1 reads " + *written + " as " + shown + ")";
    }
    out.report(path, FieldError::invalid(shown, detail), shown);
  }

  static void checkMap(const CheckContext& ctx, const json& map, const PathTrail& path, Reporter& out) {
    if (!map.is_object()) return;
    for (const auto& [key, v] : map.items()) {
      if (isScalarNonString(v)) report(ctx, path.key(key), v, out);
    }
  }

  // Tolerations: key, operator, value and effect are strings
  // (tolerationSeconds is the one number).
  static void checkTolerations(const CheckContext& ctx, const json& list, const PathTrail& path, Reporter& out) {
    if (!list.is_array()) return;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object()) continue;
      for (const char* field : {"key", "operator", "value", "effect"}) {
        auto v = list[i].find(field);
        if (v != list[i].end() && isScalarNonString(*v)) report(ctx, path.index(i).field(field), *v, out);
      }
    }
  }

  static void checkExpressions(const CheckContext& ctx, const json& exprs, const PathTrail& path, Reporter& out) {
    if (!exprs.is_array()) return;
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      if (!exprs[i].is_object()) continue;
      auto values = exprs[i].find("values");
      if (values == exprs[i].end() || !values->is_array()) continue;
      const PathTrail item = path.index(i);
      const PathTrail valuesPath = item.field("values");
      for (std::size_t j = 0; j < values->size(); ++j) {
        if (isScalarNonString((*values)[j])) report(ctx, valuesPath.index(j), (*values)[j], out);
      }
    }
  }

  // Descends into every object and array; the path of a key is made only when
  // a finding needs it (see PathTrail).
  static void walk(const CheckContext& ctx, const json& node, const PathTrail& path, int depth, Reporter& out) {
    if (depth > kMaxDepth) return;
    if (node.is_array()) {
      for (std::size_t i = 0; i < node.size(); ++i) walk(ctx, node[i], path.index(i), depth + 1, out);
      return;
    }
    if (!node.is_object()) return;
    // The map itself, not items(): no proxy per member; keys compared as
    // string_views, so most comparisons stop at the length.
    for (const auto& [name, child] : node.get_ref<const json::object_t&>()) {
      const std::string_view key = name;
      const PathTrail childPath = path.field(key);
      if (key == "nodeSelector" || key == "matchLabels") {
        checkMap(ctx, child, childPath, out);
      } else if (key == "matchExpressions") {
        checkExpressions(ctx, child, childPath, out);
      } else if (key == "tolerations") {
        checkTolerations(ctx, child, childPath, out);
      } else if (key == "metadata") {
        if (child.is_object()) {
          for (const char* map : {"labels", "annotations"}) {
            if (auto m = child.find(map); m != child.end()) checkMap(ctx, *m, childPath.field(map), out);
          }
        }
      } else if (key != "status" && (child.is_object() || child.is_array())) {
        walk(ctx, child, childPath, depth + 1, out);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeLabelValueNotString() { return std::make_unique<LabelValueNotString>(); }

}  // namespace gpuguard::checks
