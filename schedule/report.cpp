#include "schedule/report.h"

#include <algorithm>
#include <string>

#include "rules/k8s/field_error.h"
#include "rules/k8s/taints.h"

namespace gpuguard::schedule {
namespace {

using nlohmann::json;

const ResourceFit* fitOf(const NodeVerdict& v, const std::string& name) {
  for (const ResourceFit& f : v.resources) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string gpuCell(const ResourceFit* f) {
  if (f && f->viaDra) return "DRA";
  if (!f || !f->advertised) return "-";
  return f->capacity.strFor(f->name) + "/" + f->allocatable.strFor(f->name) + "/" + f->free.strFor(f->name);
}

// The node's side only: what the pod wants is printed above the table.
std::string selectorCell(const PodDiagnosis& d, const NodeVerdict& v) {
  if (!d.hasNodeSelector) return "-";
  if (v.selectorFailures.empty()) return "ok";
  std::vector<std::string> parts;
  for (const LabelCheck& c : v.selectorFailures) parts.push_back(c.observed);
  return joined(parts);
}

std::string affinityCell(const PodDiagnosis& d, const NodeVerdict& v) {
  if (!d.hasRequiredAffinity) return "-";
  if (v.affinityMatches) return "ok";
  return gpuguard::describeFailedTerms(v);
}

std::string taintsCell(const NodeVerdict& v) {
  if (v.filteringTaints == 0) return "-";
  if (v.untoleratedTaints.empty()) return "tolerated";
  std::vector<std::string> parts;
  for (const Taint& t : v.untoleratedTaints) parts.push_back(describeTaint(t));
  return joined(parts);
}

std::string requestsText(const PodDiagnosis& d) {
  std::vector<std::string> parts;
  for (const std::string& g : d.gpuResources) parts.push_back(g + " " + d.requests.at(g).strFor(g));
  for (const auto& [name, amount] : d.requests) {
    if (std::find(d.gpuResources.begin(), d.gpuResources.end(), name) == d.gpuResources.end()) {
      parts.push_back(name + " " + amount.strFor(name));
    }
  }
  return joined(parts);
}

void writeTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = "  ";
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

}  // namespace

void writePodText(std::ostream& out, const PodDiagnosis& d) {
  out << d.title();
  if (!d.source.empty()) out << " in " << d.source;
  out << "\n  requests: " << requestsText(d) << "\n";
  if (d.hasNodeSelector) out << "  nodeSelector: " << joined(d.selectorText) << "\n";
  if (d.hasRequiredAffinity) {
    out << "  required node affinity: ";
    if (d.affinityText.empty()) out << "no nodeSelectorTerms";
    for (std::size_t i = 0; i < d.affinityText.size(); ++i) {
      if (i) out << " OR ";
      if (d.affinityText.size() > 1) out << "term " << i << ": ";
      out << d.affinityText[i];
    }
    out << "\n";
  }

  std::vector<std::string> header{"NODE"};
  for (const std::string& g : d.gpuResources) header.push_back(g + " CAP/ALLOC/FREE");
  for (const char* h : {"SELECTOR", "AFFINITY", "TAINTS", "VERDICT"}) header.push_back(h);

  // Nodes whose cells are all the same share a row ("cpu-1, cpu-2 +3 more").
  struct Row {
    std::vector<std::string> nodes;
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  for (const NodeVerdict& v : d.nodes) {
    std::vector<std::string> cells;
    for (const std::string& g : d.gpuResources) cells.push_back(gpuCell(fitOf(v, g)));
    cells.push_back(selectorCell(d, v));
    cells.push_back(affinityCell(d, v));
    cells.push_back(v.cordoned ? "cordoned" : taintsCell(v));
    cells.push_back(v.verdict);
    auto same = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.cells == cells; });
    if (same != rows.end()) same->nodes.push_back(v.node);
    else rows.push_back({{v.node}, std::move(cells)});
  }
  std::vector<std::vector<std::string>> table{header};
  for (const Row& r : rows) {
    std::vector<std::string> names(r.nodes.begin(), r.nodes.begin() + std::min<std::size_t>(r.nodes.size(), 3));
    std::string node = joined(names);
    if (r.nodes.size() > 3) node += " +" + std::to_string(r.nodes.size() - 3) + " more";
    std::vector<std::string> row{node};
    row.insert(row.end(), r.cells.begin(), r.cells.end());
    table.push_back(std::move(row));
  }
  if (!d.nodes.empty()) writeTable(out, table);

  if (d.schedulable()) {
    out << "  verdict: " << d.verdict << "\n";
  } else {
    out << "  verdict: Pending: " << d.verdict << "\n";
    if (!d.dominantReason.empty()) {
      out << "  dominant reason: " << d.dominantReason << " (" << d.dominantNodes.size() << " of " << d.nodes.size()
          << (d.nodes.size() == 1 ? " node" : " nodes") << ")\n";
      for (const std::string& line : d.dominantDetails) out << "    " << line << "\n";
    }
  }
  for (const std::string& n : d.notes) out << "  note: " << n << "\n";
}

namespace {

json labelCheckJson(const LabelCheck& c) {
  return {{"requirement", c.requirement},
          {"key", c.key},
          {"nodeValue", c.nodeValue ? json(*c.nodeValue) : json(nullptr)},
          {"matches", c.matches},
          {"why", c.why},
          {"observed", c.observed}};
}

json taintJson(const Taint& t) { return {{"key", t.key}, {"value", t.value.value_or("")}, {"effect", t.effect}}; }

json nodeJson(const PodDiagnosis& d, const NodeVerdict& v) {
  json j{{"name", v.node},
         {"schedulable", v.schedulable},
         {"reasons", v.reasons},
         {"cause", v.cause},
         {"verdict", v.verdict},
         {"cordoned", v.cordoned},
         {"nodeNameMismatch", v.nodeNameMismatch},
         {"tooManyPods", v.tooManyPods}};
  j["untoleratedTaints"] = json::array();
  for (const Taint& t : v.untoleratedTaints) j["untoleratedTaints"].push_back(taintJson(t));
  j["nodeSelector"] = nullptr;
  if (d.hasNodeSelector) {
    json failing = json::array();
    for (const LabelCheck& c : v.selectorFailures) failing.push_back(labelCheckJson(c));
    j["nodeSelector"] = {{"matches", v.selectorFailures.empty()}, {"failing", failing}};
  }
  j["affinity"] = nullptr;
  if (d.hasRequiredAffinity) {
    json terms = json::array();
    for (const TermCheck& t : v.terms) {
      json failing = json::array();
      for (const LabelCheck& c : t.failing) failing.push_back(labelCheckJson(c));
      terms.push_back({{"index", t.index}, {"matches", t.matches}, {"invalid", t.invalid}, {"failing", failing}});
    }
    j["affinity"] = {{"matches", v.affinityMatches}, {"terms", terms}, {"termsNotExplained", v.termsNotExplained}};
  }
  j["resources"] = json::array();
  for (const ResourceFit& f : v.resources) {
    j["resources"].push_back({{"name", f.name},
                              {"gpu", f.gpu},
                              {"requested", f.requested.strFor(f.name)},
                              {"advertised", f.advertised},
                              {"viaDra", f.viaDra},
                              {"capacity", f.advertised ? json(f.capacity.strFor(f.name)) : json(nullptr)},
                              {"allocatable", f.advertised ? json(f.allocatable.strFor(f.name)) : json(nullptr)},
                              {"used", f.used.strFor(f.name)},
                              {"free", f.free.strFor(f.name)},
                              {"holders", f.holders},
                              {"fits", f.fits},
                              {"cause", f.cause}});
  }
  return j;
}

}  // namespace

void writeText(std::ostream& out, const std::vector<PodDiagnosis>& pods, const Snapshot& snapshot) {
  for (const std::string& w : snapshot.warnings) out << "warning: " << w << "\n";
  if (pods.empty()) {
    out << "No GPU pods or pod templates in the manifests.\n";
    return;
  }
  std::size_t pending = 0;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    if (i) out << "\n";
    writePodText(out, pods[i]);
    pending += !pods[i].schedulable();
  }
  out << "\n" << pods.size() << (pods.size() == 1 ? " GPU pod" : " GPU pods") << " against " << snapshot.nodes.size()
      << (snapshot.nodes.size() == 1 ? " node" : " nodes") << ": " << (pods.size() - pending) << " schedulable, "
      << pending << " Pending\n";
}

json toJson(const PodDiagnosis& d) {
  json requests = json::object();
  for (const auto& [name, amount] : d.requests) requests[name] = amount.strFor(name);
  json j{{"title", d.title()},
         {"kind", d.kind},
         {"namespace", d.ns},
         {"name", d.name},
         {"specPath", d.specPath},
         {"nodeSelector", d.selectorText},
         {"requiredAffinityTerms", d.affinityText},
         {"source", d.source},
         {"requests", requests},
         {"gpuResources", d.gpuResources},
         {"gpus", d.gpus},
         {"schedulable", d.schedulable()},
         {"schedulableNodes", d.schedulableNodes},
         {"verdict", d.verdict},
         {"dominantReason", d.dominantReason},
         {"dominantNodes", d.dominantNodes},
         {"dominantDetails", d.dominantDetails},
         {"notes", d.notes}};
  j["driverPin"] = nullptr;
  if (d.driverPin) {
    json have = json::object();
    for (const auto& [value, count] : d.driverPin->nodeValues) have[value] = count;
    j["driverPin"] = {{"label", d.driverPin->label},
                      {"pinned", d.driverPin->pinned},
                      {"missing", d.driverPin->missing},
                      {"where", d.driverPin->where},
                      {"nodeValues", have}};
  }
  j["nodes"] = json::array();
  for (const NodeVerdict& v : d.nodes) j["nodes"].push_back(nodeJson(d, v));
  return j;
}

json toJson(const std::vector<PodDiagnosis>& pods, const Snapshot& snapshot) {
  json j;
  j["schedulable"] = std::all_of(pods.begin(), pods.end(), [](const PodDiagnosis& d) { return d.schedulable(); });
  j["snapshot"] = {{"nodes", snapshot.nodes.size()},
                   {"podsGiven", snapshot.podsGiven},
                   {"boundPods", snapshot.boundPods},
                   {"finishedPods", snapshot.finishedPods},
                   {"podsOnOtherNodes", snapshot.podsOnOtherNodes},
                   {"warnings", snapshot.warnings}};
  j["pods"] = json::array();
  for (const PodDiagnosis& d : pods) j["pods"].push_back(toJson(d));
  return j;
}

}  // namespace gpuguard::schedule
