// The webhook's review() in a loop, with or without cluster facts: for
// `valgrind --tool=callgrind` (instruction counts do not move with the
// machine's load) and for checking that a change keeps every response
// byte-identical. No sockets, TLS or threads: review() alone, as one event
// loop of gpuguard-webhook calls it.
//
//   gpuguard-review-loop [-n REPEAT] [--facts NODES.json]... BODY...
//     -n REPEAT        review each BODY REPEAT times (default 1)
//     --facts FILE     a Node or a List of them (test/bench/gen_nodes.py writes
//                      Lists of 500 GPU nodes): judge with these cluster facts,
//                      as gpuguard-webhook --cluster-facts=on does, keeping
//                      the pods' reach between reviews as one of its threads
//                      does (rules/reach_cache.h; hits and misses on stderr)
//     --no-reach-cache judge every review's reach anew
//   Prints, for each BODY, "=== BODY HTTP_STATUS" and the response body once.
//
// Instructions per review (docs/performance.md), one shell line:
//   valgrind --tool=callgrind --toggle-collect='gpuguard::webhook::review(*'
//     gpuguard-review-loop -n 2000 [--facts ...] BODY
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "webhook/admission.h"

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Options {
  long repeat = 1;
  bool keepReaches = true;
  std::vector<std::string> factFiles;
  std::vector<std::string> bodies;
};

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "-n" || arg == "--facts") && i + 1 == argc) throw std::runtime_error(arg + " needs a value");
    if (arg == "-n") {
      o.repeat = std::strtol(argv[++i], nullptr, 10);
      if (o.repeat < 1) throw std::runtime_error("-n needs a positive count");
    } else if (arg == "--no-reach-cache") {
      o.keepReaches = false;
    } else if (arg == "--facts") {
      o.factFiles.emplace_back(argv[++i]);
    } else {
      o.bodies.push_back(arg);
    }
  }
  if (o.bodies.empty()) throw std::runtime_error("usage: gpuguard-review-loop [-n REPEAT] [--facts NODES.json]... BODY...");
  return o;
}

// The facts as the webhook's watched cache builds them: each object through
// the reducers (ClusterFactsBuilder::add), Nodes marked listed.
std::shared_ptr<const gpuguard::ClusterFacts> loadFacts(const std::vector<std::string>& files) {
  if (files.empty()) return nullptr;
  gpuguard::ClusterFactsBuilder builder;
  builder.setSource("gpuguard-review-loop");
  builder.markListed(gpuguard::FactKind::Node);
  for (const std::string& file : files) builder.add(nlohmann::json::parse(readFile(file)));
  return builder.build();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parseOptions(argc, argv);
    const auto facts = loadFacts(options.factFiles);
    const gpuguard::webhook::AdmissionPolicy policy;
    gpuguard::ReachCache reaches;
    for (const std::string& path : options.bodies) {
      const std::string body = readFile(path);
      const bool keep = facts && options.keepReaches && body.size() < gpuguard::webhook::kKeptBetweenReviewsBelowBytes;
      const gpuguard::webhook::FactsInUse with{facts.get(), {}, keep ? &reaches : nullptr};
      gpuguard::webhook::AdmissionResult last;
      for (long i = 0; i < options.repeat; ++i) last = gpuguard::webhook::review(body, policy, {}, with);
      std::cout << "=== " << path << ' ' << last.httpStatus << '\n' << last.body << '\n';
    }
    if (facts && options.keepReaches) {
      std::cerr << "# reach cache: " << reaches.hits() << " hits, " << reaches.misses() << " misses\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "gpuguard-review-loop: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
