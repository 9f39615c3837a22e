#include "rules/nvidia/require.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rules/k8s/json_access.h"

namespace gpuguard {
namespace {

using nlohmann::json;

enum class Truth { False, Unknown, True };

// golang.org/x/mod/semver.IsValid of "v" + s for plain releases: 1 to 3
// numbers without leading zeros ("550", "12.4", "550.54.15").
std::optional<DriverVersion> semverRelease(std::string_view s) {
  DriverVersion v{0, 0, 0};
  std::size_t part = 0, start = 0;
  while (true) {
    const std::size_t dot = std::min(s.find('.', start), s.size());
    const std::string_view digits = s.substr(start, dot - start);
    if (part == v.size() || digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0') ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    v[part++] = std::stoll(std::string(digits));
    if (dot == s.size()) return v;
    start = dot + 1;
  }
}

// One clause (factory.parse); nullopt for a clause the runtime skips (an
// unknown property, or nothing), `valid` false for one it rejects.
std::optional<RequireClause> parseClause(std::string_view text, bool& valid) {
  const std::size_t end = text.find_first_of("<>=!");
  if (text.empty() || end == std::string_view::npos) {
    valid = text.empty();
    return std::nullopt;
  }
  RequireClause c;
  c.property = std::string(text.substr(0, end));
  c.text = std::string(text);
  if (c.property != "cuda" && c.property != "driver" && c.property != "arch" && c.property != "brand") {
    return std::nullopt;
  }
  std::string_view rest = text.substr(end);
  for (std::string_view op : {"!=", "<=", ">=", "=", "<", ">"}) {
    if (rest.starts_with(op)) {
      c.op = std::string(op);
      rest.remove_prefix(op.size());
      break;
    }
  }
  if (c.property == "brand") return c;
  const auto v = semverRelease(rest);
  if (!v) {
    valid = false;
    return std::nullopt;
  }
  c.version = *v;
  return c;
}

// newConstraintFromRequirement: split on ' ' (OR), then on ',' (AND).
std::optional<Requirement> parseRequirement(const std::string& text) {
  Requirement req;
  req.value = text;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t space = std::min(text.find(' ', start), text.size());
    std::vector<RequireClause> clauses;
    for (std::size_t from = start; from <= space;) {
      const std::size_t comma = std::min(text.find(',', from), space);
      bool valid = true;
      if (auto c = parseClause(std::string_view(text).substr(from, comma - from), valid)) clauses.push_back(*c);
      if (!valid) return std::nullopt;
      from = comma + 1;
    }
    if (!clauses.empty()) req.alternatives.push_back(std::move(clauses));
    start = space + 1;
  }
  return req;
}

// strconv.ParseBool, as HasDisableRequire reads NVIDIA_DISABLE_REQUIRE.
bool goTrue(std::string_view s) { return s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True"; }

int compareVersions(const DriverVersion& a, const DriverVersion& b) { return a < b ? -1 : b < a ? 1 : 0; }

// What `op` says of every value in [lo, hi) (just lo when `exact`) against
// `bound`: True or False when it says the same of all of them.
Truth compareRange(const DriverVersion& lo, const DriverVersion& hi, bool exact, std::string_view op,
                   const DriverVersion& bound) {
  const int atLo = compareVersions(lo, bound);
  const bool allBelow = exact ? atLo < 0 : compareVersions(hi, bound) <= 0;
  auto truth = [](bool certainlyTrue, bool certainlyFalse) {
    return certainlyTrue ? Truth::True : certainlyFalse ? Truth::False : Truth::Unknown;
  };
  if (op == ">=") return truth(atLo >= 0, allBelow);
  if (op == ">") return truth(atLo > 0, allBelow || (exact && atLo == 0));
  if (op == "<") return truth(allBelow, atLo >= 0);
  if (op == "<=") return truth(allBelow || (exact && atLo == 0), atLo > 0);
  if (op == "=") return exact ? truth(atLo == 0, atLo != 0) : truth(false, atLo > 0 || allBelow);
  if (op == "!=") return exact ? truth(atLo != 0, atLo == 0) : truth(atLo > 0 || allBelow, false);
  return Truth::Unknown;
}

Truth clauseOn(const RequireClause& c, const NodeDriver& d) {
  if (c.property == "driver") return compareRange(d.version, {d.version[0] + 1, 0, 0}, d.full, c.op, c.version);
  if (c.property == "cuda") {
    // cuda compares the newest CUDA the node's driver supports.
    const DriverBranch* b = knownBranch(d.version[0]);
    if (!b) return Truth::Unknown;
    const DriverVersion cuda{b->cudaMajor, b->cudaMinor, 0};
    return compareRange(cuda, cuda, true, c.op, c.version);
  }
  return Truth::Unknown;
}

}  // namespace

std::vector<Requirement> containerRequirements(const ContainerRef& c) {
  std::vector<Requirement> out;
  const json* env = arrayAt(*c.container, "env");
  if (!env) return out;
  for (std::size_t i = 0; i < env->size(); ++i) {
    const std::string* name = stringAt((*env)[i], "name");
    const std::string* value = stringAt((*env)[i], "value");
    if (!name || !value) continue;
    if (*name == "NVIDIA_DISABLE_REQUIRE" && goTrue(*value)) return {};
    if (!name->starts_with("NVIDIA_REQUIRE_") || name->starts_with("NVIDIA_REQUIRE_JETPACK")) continue;
    if (auto req = parseRequirement(*value)) {
      req->path = c.path.field("env").index(i).field("value");
      out.push_back(std::move(*req));
    }
  }
  return out;
}

const RequireClause* falseClause(const std::vector<RequireClause>& alternative, const NodeDriver& d) {
  for (const RequireClause& c : alternative) {
    if (clauseOn(c, d) == Truth::False) return &c;
  }
  return nullptr;
}

bool requirementFailsOn(const Requirement& req, const NodeDriver& d) {
  if (req.alternatives.empty()) return false;  // OR of nothing: always
  return std::all_of(req.alternatives.begin(), req.alternatives.end(),
                     [&](const std::vector<RequireClause>& a) { return falseClause(a, d) != nullptr; });
}

}  // namespace gpuguard
