// What the kubelet and CUDA do to a launch before the server reads its
// flags: $(VAR) in command and args expanded from the container's env
// (ExpandContainerCommandAndArgs), and the devices a CUDA_VISIBLE_DEVICES
// value leaves visible. For rules/serving/launch.cpp (reference §15.8).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuguard {

// The container's env entries with a literal value that holds no reference
// itself, by name (the last entry of a name wins; one whose value is not
// literal makes the name unknown).
using EnvValues = std::map<std::string, std::string, std::less<>>;
EnvValues literalEnvValues(const nlohmann::json& container);

// $(VAR) replaced by the env var's value, $$ by $ (so $$(VAR) stays the
// literal text $(VAR)); an unknown $(VAR) stays as written.
std::string expandEnvReferences(const std::string& s, const EnvValues& env);

// The devices a literal CUDA_VISIBLE_DEVICES value names ("0,1" -> 2);
// nullopt for an expansion or an empty value.
std::optional<long long> visibleCount(const std::string& value, bool dynamic);

}  // namespace gpuguard
