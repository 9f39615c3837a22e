// Reading typed values out of a policy document, for every reader of one
// (rules/policy.cpp, rules/exemptions.cpp, yaml/policy_file.cpp): each error
// is a PolicyError "<source>: <key>: <what is wrong>", naming the entry.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/pattern.h"
#include "rules/policy.h"

namespace gpuguard::policy_json {

[[noreturn]] void fail(std::string_view source, std::string_view key, std::string_view what);

std::string typeName(const nlohmann::json& v);

// "key[3]"
std::string entryKey(std::string_view key, std::size_t index);

std::vector<std::string> stringList(const nlohmann::json& v, std::string_view source, std::string_view key);
const std::string& string(const nlohmann::json& v, std::string_view source, std::string_view key);
bool boolean(const nlohmann::json& v, std::string_view source, std::string_view key);

// A string compiled as a Pattern; RE2's reason and the pattern go into the error.
Pattern pattern(const nlohmann::json& v, std::string_view source, std::string_view key);

// A rule id: a string `knownRule` accepts (an empty one accepts any; the
// error names "--list-rules").
std::string ruleId(const nlohmann::json& v, std::string_view source, std::string_view key,
                   const KnownRule& knownRule);

}  // namespace gpuguard::policy_json
