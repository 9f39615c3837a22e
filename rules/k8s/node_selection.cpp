#include "rules/k8s/node_selection.h"

#include <algorithm>

#include "rules/k8s/go_strconv.h"

namespace gpuguard {
namespace {

using nlohmann::json;

// A nodeSelector or expression value as a string, the way a controller that
// stringifies it would see it ("535" for an unquoted 535).
std::optional<std::string> selectorValueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  return std::nullopt;
}

NodeRequirement expressionRequirement(const json& e, const FieldPath& path) {
  NodeRequirement r;
  r.path = path;
  if (auto k = e.find("key"); k != e.end() && k->is_string()) r.key = k->get<std::string>();
  if (auto o = e.find("operator"); o != e.end() && o->is_string()) r.op = o->get<std::string>();
  if (auto vs = e.find("values"); vs != e.end() && vs->is_array()) {
    for (const json& v : *vs) {
      if (auto t = selectorValueText(v)) r.values.push_back(*t);
    }
  }
  return r;
}

}  // namespace

std::vector<NodeTerm> nodeSelectionTerms(const PodSite& site) {
  std::vector<NodeRequirement> fromSelector;
  if (site.nodeSelector.value && site.nodeSelector.value->is_object()) {
    for (const auto& [key, value] : site.nodeSelector.value->items()) {
      NodeRequirement r;
      r.key = key;
      r.op = "In";
      r.fromNodeSelector = true;
      r.path = site.nodeSelector.path.key(key);
      if (auto t = selectorValueText(value)) r.values.push_back(*t);
      fromSelector.push_back(std::move(r));
    }
  }

  const json* terms = nullptr;
  FieldPath termsPath;
  if (site.affinity.value && site.affinity.value->is_object()) {
    const json& a = *site.affinity.value;
    if (auto na = a.find("nodeAffinity"); na != a.end() && na->is_object()) {
      if (auto req = na->find("requiredDuringSchedulingIgnoredDuringExecution");
          req != na->end() && req->is_object()) {
        if (auto t = req->find("nodeSelectorTerms"); t != req->end() && t->is_array() && !t->empty()) {
          terms = &*t;
          termsPath = site.affinity.path.field("nodeAffinity")
                          .field("requiredDuringSchedulingIgnoredDuringExecution")
                          .field("nodeSelectorTerms");
        }
      }
    }
  }

  std::vector<NodeTerm> out;
  if (!terms) {
    out.push_back({fromSelector, std::nullopt, false});
    return out;
  }
  for (std::size_t i = 0; i < terms->size(); ++i) {
    const json& t = (*terms)[i];
    NodeTerm term{fromSelector, i, false};
    bool hasAny = false;
    if (t.is_object()) {
      const FieldPath exprsPath = termsPath.index(i).field("matchExpressions");
      if (auto exprs = t.find("matchExpressions"); exprs != t.end() && exprs->is_array()) {
        for (std::size_t j = 0; j < exprs->size(); ++j) {
          if (!(*exprs)[j].is_object()) continue;
          term.requirements.push_back(expressionRequirement((*exprs)[j], exprsPath.index(j)));
          hasAny = true;
        }
      }
      if (auto fields = t.find("matchFields"); fields != t.end() && fields->is_array() && !fields->empty()) {
        hasAny = true;
      }
    }
    // A term with no expressions and no fields matches no node (§7.3).
    term.matchesNothing = !hasAny;
    out.push_back(std::move(term));
  }
  return out;
}

std::string describeRequirement(const NodeRequirement& r, const NodeTerm& term) {
  if (r.fromNodeSelector) {
    return "nodeSelector " + r.key + "=" + (r.values.empty() ? std::string() : r.values.front());
  }
  std::string values;
  for (const std::string& v : r.values) values += (values.empty() ? "" : ", ") + v;
  return "required node affinity nodeSelectorTerms[" + std::to_string(term.termIndex.value_or(0)) + "]: " + r.key +
         " " + r.op + " [" + values + "]";
}

bool requirementMatches(std::string_view op, const std::vector<std::string>& values,
                        const std::optional<std::string>& nodeValue) {
  const bool listed = nodeValue && std::find(values.begin(), values.end(), *nodeValue) != values.end();
  if (op == "In") return listed;
  if (op == "NotIn") return !listed;
  if (op == "Exists") return nodeValue.has_value();
  if (op == "DoesNotExist") return !nodeValue;
  if (op != "Gt" && op != "Lt") return false;
  if (!nodeValue || values.size() != 1) return false;
  const std::optional<long long> have = parseGoInt(*nodeValue), want = parseGoInt(values.front());
  return have && want && (op == "Gt" ? *have > *want : *have < *want);
}

}  // namespace gpuguard
