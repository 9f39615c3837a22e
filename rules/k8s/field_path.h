// A path to a node in a Kubernetes object, printable both in the API
// server's field-error notation and as an RFC 6901 JSON pointer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/json_pointer.h"

namespace gpuguard {

// Checks extend paths at every step of a walk and print only the few they
// report, so extending and copying must be cheap: a path is a pointer to its
// last segment, and each segment points to the (shared, immutable) path it
// extends. Extending costs one allocation; copying bumps a reference count;
// the strings are built only by apiPath() and jsonPointer().
class FieldPath {
 public:
  // One step of a path, as segments() lists them.
  struct Step {
    enum class Kind : std::uint8_t { Field, Index, Key } kind;
    std::string_view name;  // Field and Key (valid while the path lives)
    std::size_t index = 0;  // Index
  };

  FieldPath() = default;
  FieldPath(const FieldPath& other) noexcept;
  FieldPath(FieldPath&& other) noexcept;
  FieldPath& operator=(const FieldPath& other) noexcept;
  FieldPath& operator=(FieldPath&& other) noexcept;
  ~FieldPath();

  // spec -> spec.containers
  FieldPath field(std::string_view name) const;
  // containers -> containers[0]
  FieldPath index(std::size_t i) const;
  // limits -> limits[nvidia.com/gpu]  (map keys are bracketed, unquoted)
  FieldPath key(std::string_view k) const;

  bool empty() const { return last_ == nullptr; }

  // The steps from the root: what the front ends and the suppression lookup
  // walk instead of parsing a printed path back.
  std::vector<Step> segments() const;

  // The path an RFC 6901 pointer names inside `root`: tokens under arrays are
  // indexes, other tokens fields when they are identifiers and keys when not
  // (labels[app.kubernetes.io/name]); past the end of `root` the same holds.
  static FieldPath fromPointer(std::string_view pointer, const nlohmann::json& root);
  // The same from decoded reference tokens (a Step's token: its name, or its
  // index in decimal), so that a path can be re-read against another root
  // without printing and parsing a pointer.
  static FieldPath fromTokens(const std::vector<std::string>& tokens, const nlohmann::json& root);
  // A step's reference token, decoded: its name, or its index in decimal.
  static std::string tokenOf(const Step& step);

  // "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"
  std::string apiPath() const;
  // "/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu"
  std::string jsonPointer() const;

 private:
  using Kind = Step::Kind;
  struct Segment;

  explicit FieldPath(const Segment* last) noexcept : last_(last) {}
  FieldPath extended(Kind kind, std::string_view name, std::size_t index) const;
  static void retain(const Segment* s) noexcept;
  static void release(const Segment* s) noexcept;

  const Segment* last_ = nullptr;  // null: the root (empty path)
};

// The node one step leads to from `node`, or nullptr when it is not there
// (an index past the end, a member the map lacks, a step into a scalar).
const nlohmann::json* stepInto(const nlohmann::json& node, const FieldPath::Step& step);

// A path during a recursive walk over a whole object. Each step lives on the
// walker's stack and refers to the step it extends, so descending costs
// nothing; a FieldPath is built only for what is reported or kept. A step
// must not outlive the step it extends, nor the names it was given: pass
// steps down the recursion (`walk(child, at.field(key))`), never return or
// store them.
class PathTrail {
 public:
  PathTrail() = default;  // the root

  PathTrail field(std::string_view name) const { return {this, Kind::Field, name, 0}; }
  PathTrail index(std::size_t i) const { return {this, Kind::Index, {}, i}; }
  PathTrail key(std::string_view k) const { return {this, Kind::Key, k, 0}; }

  FieldPath toFieldPath() const;

 private:
  enum class Kind : std::uint8_t { Root, Field, Index, Key };

  PathTrail(const PathTrail* parent, Kind kind, std::string_view name, std::size_t index)
      : parent_(parent), kind_(kind), name_(name), index_(index) {}

  const PathTrail* parent_ = nullptr;
  Kind kind_ = Kind::Root;
  std::string_view name_;
  std::size_t index_ = 0;
};

}  // namespace gpuguard
