#include "rules/label_fields.h"

namespace gpuguard {
namespace {

using nlohmann::json;
using Kind = LabelField::Kind;

// The kind of field a member named `key` is, other than metadata; nullopt for
// any other member.
std::optional<Kind> kindOf(std::string_view key) {
  if (key == "nodeSelector") return Kind::NodeSelector;
  if (key == "matchLabels") return Kind::MatchLabels;
  if (key == "matchExpressions") return Kind::MatchExpressions;
  if (key == "tolerations") return Kind::Tolerations;
  if (key == "nodeAffinity") return Kind::NodeAffinity;
  return std::nullopt;
}

}  // namespace

LabelFields::LabelFields(const json& object) { walk(object, PathTrail{}, 0, LabelField::kNone); }

// The path of a member is made only when it is listed (see PathTrail).
void LabelFields::walk(const json& node, const PathTrail& path, int depth, std::size_t enclosing) {
  if (depth > kMaxDepth) return;
  if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], path.index(i), depth + 1, enclosing);
    return;
  }
  if (!node.is_object()) return;
  // The map itself, not items(): no proxy per member; keys compared as
  // string_views, so most comparisons stop at the length.
  for (const auto& [name, child] : node.get_ref<const json::object_t&>()) {
    const std::string_view key = name;
    if (key == "status") continue;
    const PathTrail childPath = path.field(key);
    if (key == "metadata") {
      fields_.push_back({Kind::Metadata, &child, childPath.toFieldPath(), enclosing});
      continue;
    }
    std::size_t childEnclosing = enclosing;
    if (const std::optional<Kind> kind = kindOf(key)) {
      childEnclosing = fields_.size();
      fields_.push_back({*kind, &child, childPath.toFieldPath(), enclosing});
    }
    if (child.is_structured()) walk(child, childPath, depth + 1, childEnclosing);
  }
}

}  // namespace gpuguard
