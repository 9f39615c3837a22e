// label-value-not-string: a nodeSelector, label, annotation or toleration
// value written as a number or a boolean.
#include <algorithm>

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

// What the check reads as a whole; a field inside one of these (a
// nodeSelector inside tolerations) is not this check's business.
bool judgedWhole(const LabelField& field) {
  using Kind = LabelField::Kind;
  return field.kind == Kind::NodeSelector || field.kind == Kind::MatchLabels ||
         field.kind == Kind::MatchExpressions || field.kind == Kind::Tolerations;
}

bool isScalarNonString(const json& v) { return v.is_number() || v.is_boolean(); }

// Whether the map holds a value this check reports (most hold none: their
// paths are then never made).
bool holdsNonString(const json& map) {
  if (!map.is_object()) return false;
  const auto& members = map.get_ref<const json::object_t&>();
  return std::any_of(members.begin(), members.end(),
                     [](const auto& member) { return isScalarNonString(member.second); });
}

class LabelValueNotString final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    const LabelFields& fields = ctx.labelFields();
    for (const LabelField& field : fields.all()) {
      if (fields.insideAny(field, judgedWhole)) continue;
      const json& value = *field.value;
      switch (field.kind) {
        case LabelField::Kind::NodeSelector:
        case LabelField::Kind::MatchLabels: checkMap(ctx, value, field.path, out); break;
        case LabelField::Kind::MatchExpressions: checkExpressions(ctx, value, field.path, out); break;
        case LabelField::Kind::Tolerations: checkTolerations(ctx, value, field.path, out); break;
        case LabelField::Kind::Metadata: checkMetadata(ctx, value, field.path, out); break;
        case LabelField::Kind::NodeAffinity: break;  // its matchExpressions are listed on their own
      }
    }
  }

 private:
  static void report(const CheckContext& ctx, const FieldPath& path, const json& v, Reporter& out) {
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

  static void checkMap(const CheckContext& ctx, const json& map, const FieldPath& path, Reporter& out) {
    if (!map.is_object()) return;
    for (const auto& [key, v] : map.items()) {
      if (isScalarNonString(v)) report(ctx, path.key(key), v, out);
    }
  }

  static void checkMetadata(const CheckContext& ctx, const json& metadata, const FieldPath& path, Reporter& out) {
    if (!metadata.is_object()) return;
    for (const char* map : {"labels", "annotations"}) {
      if (auto m = metadata.find(map); m != metadata.end() && holdsNonString(*m)) {
        checkMap(ctx, *m, path.field(map), out);
      }
    }
  }

  // Tolerations: key, operator, value and effect are strings
  // (tolerationSeconds is the one number).
  static void checkTolerations(const CheckContext& ctx, const json& list, const FieldPath& path, Reporter& out) {
    if (!list.is_array()) return;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object()) continue;
      for (const char* field : {"key", "operator", "value", "effect"}) {
        auto v = list[i].find(field);
        if (v != list[i].end() && isScalarNonString(*v)) report(ctx, path.index(i).field(field), *v, out);
      }
    }
  }

  static void checkExpressions(const CheckContext& ctx, const json& exprs, const FieldPath& path, Reporter& out) {
    if (!exprs.is_array()) return;
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      if (!exprs[i].is_object()) continue;
      auto values = exprs[i].find("values");
      if (values == exprs[i].end() || !values->is_array()) continue;
      for (std::size_t j = 0; j < values->size(); ++j) {
        if (isScalarNonString((*values)[j])) report(ctx, path.index(i).field("values").index(j), (*values)[j], out);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeLabelValueNotString() { return std::make_unique<LabelValueNotString>(); }

}  // namespace gpuguard::checks
