// A path to a node in a Kubernetes object, printable both in the API
// server's field-error notation and as an RFC 6901 JSON pointer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuguard {

class FieldPath {
 public:
  FieldPath() = default;

  // spec -> spec.containers
  FieldPath field(std::string_view name) const;
  // containers -> containers[0]
  FieldPath index(std::size_t i) const;
  // limits -> limits[nvidia.com/gpu]  (map keys are bracketed, unquoted)
  FieldPath key(std::string_view k) const;

  bool empty() const { return segments_.empty(); }

  // "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"
  std::string apiPath() const;
  // "/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu"
  std::string jsonPointer() const;

 private:
  enum class Kind { Field, Index, Key };
  struct Segment {
    Kind kind;
    std::string name;  // field name or map key
    std::size_t index = 0;
  };
  std::vector<Segment> segments_;
};

// Escapes one reference token for a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string escapeJsonPointerToken(std::string_view token);

}  // namespace gpuguard
