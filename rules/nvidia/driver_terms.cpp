#include "rules/nvidia/driver_terms.h"

#include <algorithm>
#include <limits>

#include "rules/k8s/go_strconv.h"
#include "rules/nvidia/gfd_labels.h"

namespace gpuguard {

void LabelFamily::intersectMajor(std::vector<long long> values) {
  if (!majorIn) {
    majorIn = std::move(values);
    return;
  }
  std::vector<long long> kept;
  for (long long v : *majorIn) {
    if (std::find(values.begin(), values.end(), v) != values.end()) kept.push_back(v);
  }
  majorIn = std::move(kept);
}

void LabelFamily::intersectFull(std::vector<DriverVersion> values) {
  if (!fullIn) {
    fullIn = std::move(values);
    return;
  }
  std::vector<DriverVersion> kept;
  for (const DriverVersion& v : *fullIn) {
    if (std::find(values.begin(), values.end(), v) != values.end()) kept.push_back(v);
  }
  fullIn = std::move(kept);
}

void LabelFamily::addMajor(const NodeRequirement& r) {
  if (r.op == "In") {
    std::vector<long long> values;
    for (const std::string& s : r.values) {
      if (isCanonicalUnsigned(s)) values.push_back(std::stoll(s));  // anything else matches no GFD value
    }
    intersectMajor(std::move(values));
    evidence = &r;
  } else if (r.op == "NotIn") {
    for (const std::string& s : r.values) {
      if (isCanonicalUnsigned(s)) majorNotIn.push_back(std::stoll(s));
    }
  } else if (r.op == "Gt" || r.op == "Lt") {
    auto n = r.values.size() == 1 ? parseGoInt(r.values.front()) : std::nullopt;
    if (!n) {
      impossible = true;  // the scheduler never matches such a term (§7.3)
      return;
    }
    if (r.op == "Gt") {
      if (!gt || *n > *gt) {
        gt = *n;
        if (!majorIn) evidence = &r;
      }
    } else if (!lt || *n < *lt) {
      lt = *n;
    }
  }
}

void LabelFamily::addFull(const NodeRequirement& r, int minParts, int maxParts) {
  if (r.op == "In") {
    std::vector<DriverVersion> values;
    for (const std::string& s : r.values) {
      if (auto t = parseDottedVersion(s, minParts, maxParts)) values.push_back(*t);
    }
    intersectFull(std::move(values));
    evidence = &r;
  } else if (r.op == "Gt" || r.op == "Lt") {
    impossible = true;  // "550.54.15" is never an integer
  }
}

bool LabelFamily::majorAdmits(long long m) const {
  if (majorIn && std::find(majorIn->begin(), majorIn->end(), m) == majorIn->end()) return false;
  if (std::find(majorNotIn.begin(), majorNotIn.end(), m) != majorNotIn.end()) return false;
  if (gt && !(m > *gt)) return false;
  if (lt && !(m < *lt)) return false;
  return true;
}

std::optional<LabelFamily::Lowest> LabelFamily::lowest(bool& matchesNothing) const {
  matchesNothing = false;
  if (impossible) {
    matchesNothing = true;
    return std::nullopt;
  }
  if (fullIn) {
    std::optional<DriverVersion> best;
    for (const DriverVersion& t : *fullIn) {
      if (majorAdmits(t[0]) && (!best || t < *best)) best = t;
    }
    if (!best) matchesNothing = true;
    return best ? std::optional<Lowest>(Lowest{*best, true}) : std::nullopt;
  }
  if (majorIn) {
    std::optional<long long> best;
    for (long long m : *majorIn) {
      if (majorAdmits(m) && (!best || m < *best)) best = m;
    }
    if (!best) matchesNothing = true;
    return best ? std::optional<Lowest>(Lowest{{*best, 0, 0}, false}) : std::nullopt;
  }
  if (gt) {
    const std::optional<long long> first =
        isDriverFamily ? lowestDriverAbove(*gt)
                       : (*gt < std::numeric_limits<long long>::max() ? std::optional<long long>(*gt + 1) : std::nullopt);
    if (!first || (lt && *first >= *lt)) {
      matchesNothing = true;
      return std::nullopt;
    }
    return Lowest{{*first, 0, 0}, false};
  }
  return std::nullopt;
}

std::optional<long long> LabelFamily::lowestDriverAbove(long long above) const {
  // Drivers come in branches (…, 570, 575, 580, 590): no Linux driver 576
  // exists, so Gt 575 means 580 or later (reference §10.2). Above the newest
  // branch the table knows, the next one is unknown: any number may be it.
  for (const DriverBranch& b : driverBranches()) {
    if (b.driver > above && majorAdmits(b.driver)) return b.driver;
  }
  if (above >= driverBranches().back().driver && above < std::numeric_limits<long long>::max() &&
      majorAdmits(above + 1)) {
    return above + 1;
  }
  return std::nullopt;
}

TermFamilies familiesOf(const NodeTerm& term) {
  TermFamilies f;
  f.driver.isDriverFamily = true;
  for (const NodeRequirement& r : term.requirements) {
    if (isDriverMajorLabel(r.key)) f.driver.addMajor(r);
    else if (isDriverFullLabel(r.key)) f.driver.addFull(r, 2, 3);
    else if (isRuntimeMajorLabel(r.key)) f.runtime.addMajor(r);
    else if (isRuntimeFullLabel(r.key)) f.runtime.addFull(r, 2, 2);
  }
  return f;
}

bool runtimeAdmits(const LabelFamily& runtime, const DriverBranch& b) {
  if (!runtime.majorAdmits(b.cudaMajor)) return false;
  if (!runtime.fullIn) return true;
  const DriverVersion cuda{b.cudaMajor, b.cudaMinor, 0};
  return std::find(runtime.fullIn->begin(), runtime.fullIn->end(), cuda) != runtime.fullIn->end();
}

bool runtimeConstrains(const LabelFamily& runtime) { return runtime.majorIn || runtime.fullIn || runtime.gt; }

std::optional<std::vector<AdmittedDriver>> admittedDrivers(const NodeTerm& term) {
  // Named references rather than a structured binding: the lambda below
  // captures `runtime`, which clang before 16 refuses for a binding.
  const TermFamilies families = familiesOf(term);
  const LabelFamily& driver = families.driver;
  const LabelFamily& runtime = families.runtime;
  if (driver.impossible || runtime.impossible) return std::vector<AdmittedDriver>{};
  const std::string driverEvidence = driver.evidence ? describeRequirement(*driver.evidence, term) : "";
  std::vector<AdmittedDriver> out;
  auto admit = [&](const DriverVersion& v, bool full, const std::string& evidence) {
    const DriverBranch* b = knownBranch(v[0]);
    if (b && !runtimeAdmits(runtime, *b)) return;
    out.push_back({{v, full}, evidence});
  };
  if (driver.fullIn) {
    for (const DriverVersion& t : *driver.fullIn) {
      if (driver.majorAdmits(t[0])) admit(t, true, driverEvidence);
    }
  } else if (driver.majorIn) {
    for (long long m : *driver.majorIn) {
      if (driver.majorAdmits(m)) admit({m, 0, 0}, false, driverEvidence);
    }
  } else if (driver.gt) {
    // Only real branches above the bound (Gt 575 admits 580, not 576); an
    // unknown branch only above the newest the table knows.
    for (const DriverBranch& b : driverBranches()) {
      if (b.driver > *driver.gt && driver.majorAdmits(b.driver)) admit({b.driver, 0, 0}, false, driverEvidence);
    }
    if (*driver.gt >= driverBranches().back().driver) {
      if (const auto next = driver.lowestDriverAbove(*driver.gt)) admit({*next, 0, 0}, false, driverEvidence);
    }
  } else if (runtimeConstrains(runtime)) {
    const std::string evidence = runtime.evidence ? describeRequirement(*runtime.evidence, term) : "";
    for (const DriverBranch& b : driverBranches()) {
      if (runtimeAdmits(runtime, b)) out.push_back({{{b.driver, 0, 0}, false}, evidence});
    }
    if (!runtime.lt && !runtime.majorIn && !runtime.fullIn) return std::nullopt;  // newer branches than we know
  } else {
    return std::nullopt;
  }
  return out;
}

std::optional<AdmittedDriver> requirementFailure(const Requirement& req, const std::vector<NodeTerm>& terms) {
  std::optional<AdmittedDriver> worst;
  for (const NodeTerm& term : terms) {
    if (term.matchesNothing) continue;
    const auto drivers = admittedDrivers(term);
    if (!drivers) return std::nullopt;
    for (const AdmittedDriver& d : *drivers) {
      if (requirementFailsOn(req, d) && (!worst || d.version < worst->version)) worst = d;
    }
  }
  return worst;
}

std::optional<long long> lowestBranchThatMaySatisfy(const Requirement& req, long long above) {
  for (const DriverBranch& b : driverBranches()) {
    if (b.driver > above && !requirementFailsOn(req, NodeDriver{{b.driver, 0, 0}, false})) return b.driver;
  }
  return std::nullopt;
}

}  // namespace gpuguard
