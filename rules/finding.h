// A finding: one thing wrong with one field of one object, kept structured
// (the path as segments, a typed field error) until a front end renders it;
// rendered, it reads like the API server's own field errors
// ("<field>: Invalid value: "500m": ...").
#pragma once

#include <string>
#include <string_view>

#include <optional>

#include "rules/fix.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/field_path.h"

namespace gpuguard {

enum class Severity { Error, Warning };

// Which Kubernetes object a finding is about (rules/object_ref.h finds it).
struct ObjectRef {
  std::string apiVersion;
  std::string kind;
  std::string ns;           // metadata.namespace, "" when not set
  std::string name;         // metadata.name, else metadata.generateName, else ""
  std::string pointer;      // the object inside its document: "" or "/items/312"
  std::string podTemplate;  // the pod spec holding the finding, as an API path inside the
                            // object ("spec.template.spec", "spec" for a Pod); "" for none

  // Kind/namespace/name, or Kind/name without a namespace; "<unnamed>"
  // stands for a missing name.
  std::string display() const;
};

std::string_view severityName(Severity s);

struct Finding {
  std::string rule;  // the id, e.g. "gpu-fractional" (a rule or a built-in check, rules/catalog.h)
  Severity severity = Severity::Error;
  FieldPath path;      // the offending node
  FieldError error;    // what the API server would say of it, and what to do
  std::string value;   // the offending value as written, "" when the problem is something missing
  std::optional<Fix> fix;  // what the rule would change (JSON-level edits), if it knows
  // The object it is about and the pod template holding it: judge() says,
  // from the path's segments; unset for findings a front end makes.
  std::optional<ObjectRef> object;
  bool suppressed = false;
  std::string suppressionReason;  // from the ignore.gpuguard.io/<rule> annotation

  // API server notation: spec.containers[0].resources.limits[nvidia.com/gpu]
  std::string field() const { return path.apiPath(); }
  // RFC 6901 pointer to the same node: /spec/containers/0/resources/limits/nvidia.com~1gpu
  std::string pointer() const { return path.jsonPointer(); }
  // The error without the path: "Invalid value: "0.5": must be an integer; ..."
  std::string message() const { return error.body(); }
  // "<field>: <message>", the form kubectl users know from API errors.
  std::string fieldError() const;
};

}  // namespace gpuguard
