// The fields of an object that hold labels, node selection and tolerations,
// found in one walk of the whole object: label-value-not-string,
// gpu-label-value and node-affinity-gt-lt read this list instead of each
// walking every member of the object (three walks were a tenth of a
// webhook review's instructions).
//
// The walk goes everywhere but into `metadata` and `status`: into arrays and
// objects of any kind, custom resources included, and on below a field it
// lists (a matchExpressions inside a nodeAffinity is listed as well). Each
// listed field names the nearest listed field around it, so that a check can
// leave out what sits inside a field it judges as a whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"

namespace gpuguard {

struct LabelField {
  // The member's name says which (the value may have any JSON type).
  enum class Kind : std::uint8_t {
    Metadata,          // metadata (labels, annotations); the walk does not go below it
    NodeSelector,      // nodeSelector: a map of labels, or a NodeSelector with nodeSelectorTerms
    MatchLabels,       // matchLabels
    MatchExpressions,  // matchExpressions
    Tolerations,       // tolerations
    NodeAffinity,      // nodeAffinity
  };
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  Kind kind;
  const nlohmann::json* value;  // the member's value, inside the object walked
  FieldPath path;               // of the member
  std::size_t enclosing = kNone;  // index of the nearest listed field whose value holds this one
};

// The listed fields in document order (a member before what its value holds,
// members of an object in key order), down to kMaxDepth arrays and objects
// below the root.
class LabelFields {
 public:
  static constexpr int kMaxDepth = 64;

  explicit LabelFields(const nlohmann::json& object);

  const std::vector<LabelField>& all() const { return fields_; }

  // Whether a field around `field` (its enclosing one, and so on outwards)
  // satisfies `pred`.
  template <class Pred>
  bool insideAny(const LabelField& field, Pred pred) const {
    for (std::size_t i = field.enclosing; i != LabelField::kNone; i = fields_[i].enclosing) {
      if (pred(fields_[i])) return true;
    }
    return false;
  }

 private:
  void walk(const nlohmann::json& node, const PathTrail& path, int depth, std::size_t enclosing);

  std::vector<LabelField> fields_;
};

// An object's LabelFields, found the first time a check asks (a policy may
// turn off every check that reads them).
class LabelFieldsMemo {
 public:
  const LabelFields& of(const nlohmann::json& object) {
    if (!fields_) fields_.emplace(object);
    return *fields_;
  }

 private:
  std::optional<LabelFields> fields_;
};

}  // namespace gpuguard
