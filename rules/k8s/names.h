// Kubernetes' name and label syntax, with the API server's own messages
// (k8s.io/apimachinery pkg/util/validation and pkg/apis/core/helper): resource
// names, qualified names (label keys), label values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuguard {

// IsNativeResource: no '/' or contains "kubernetes.io/".
bool isNativeResourceName(std::string_view name);
// IsExtendedResourceName: not native, not "requests.*", and
// "requests." + name is a qualified name.
bool isExtendedResourceName(std::string_view name);
// IsQualifiedName (label key syntax): [prefix/]name.
bool isQualifiedName(std::string_view name);
// IsValidLabelValue: <= 63 chars, empty or alnum at both ends, [-_.A-Za-z0-9] inside.
bool isValidLabelValue(std::string_view value);

// The messages the API server's validators give (k8s.io/apimachinery
// pkg/util/validation), for findings that quote the API server; empty when
// the text is valid. Several messages are several field errors of one field.
// validation.IsQualifiedName (a label key, a resource name).
std::vector<std::string> qualifiedNameErrors(std::string_view name);
// validation.IsValidLabelValue.
std::vector<std::string> labelValueErrors(std::string_view value);
// validateContainerResourceName for a name with a '/' (names without one are
// standard resources or rejected as "must be a standard resource type or
// fully qualified"): IsQualifiedName's messages, then "doesn't follow
// extended resource name standard" when the name is neither native nor
// extended ("requests.nvidia.com/gpu", "nvidia.com/gpu ").
std::vector<std::string> prefixedResourceNameErrors(std::string_view name);
}  // namespace gpuguard
