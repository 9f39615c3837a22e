// A path to a node in a Kubernetes object, printable both in the API
// server's field-error notation and as an RFC 6901 JSON pointer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rules/k8s/json_pointer.h"

namespace gpuguard {

// Checks extend paths at every step of a walk and print only the few they
// report, so extending and copying must be cheap: a path is a pointer to its
// last segment, and each segment points to the (shared, immutable) path it
// extends. Extending costs one allocation; copying bumps a reference count;
// the strings are built only by apiPath() and jsonPointer().
class FieldPath {
 public:
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

  // "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"
  std::string apiPath() const;
  // "/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu"
  std::string jsonPointer() const;

 private:
  enum class Kind : std::uint8_t { Field, Index, Key };
  struct Segment;

  explicit FieldPath(const Segment* last) noexcept : last_(last) {}
  FieldPath extended(Kind kind, std::string_view name, std::size_t index) const;
  static void retain(const Segment* s) noexcept;
  static void release(const Segment* s) noexcept;

  const Segment* last_ = nullptr;  // null: the root (empty path)
};

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
