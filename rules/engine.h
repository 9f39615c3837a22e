// The rule engine: one Kubernetes object (as JSON) and a policy in, findings
// out. Both front ends call only this: gpuguard-lint for each YAML document,
// gpuguard-webhook for each AdmissionReview object.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "rules/exemptions.h"
#include "rules/finding.h"
#include "rules/input_facts.h"
#include "rules/policy.h"
#include "rules/reach_cache.h"
#include "rules/rule.h"

namespace gpuguard {

struct JudgeOptions {
  const SourceHints* hints = nullptr;  // how scalars were written, if known
  // The object is a fragment (a kustomize patch: the caller knows it from
  // the kustomization that lists it): only rules registered as
  // Judges::WhatIsWritten run, so it is judged for what it says, never for
  // what it lacks (registry.h). A pod spec whose container has no image (a
  // Spark pod template, an operator's pod spec) is no fragment: it is judged
  // whole, and what only an image tells (the CUDA version it was built for)
  // is unknown for that container, so nothing is concluded from it.
  bool fragment = false;
  // Rules an exemption names skip the object (rules/exemptions.h).
  const Exemptions* exemptions = nullptr;
  // The namespace the object is in when the caller knows better than its
  // metadata (the admission request's); "" reads metadata.namespace.
  std::string_view namespaceName = {};
  // What the whole input defines (InputFacts::add over every object of a
  // file or stream). Null: only what `object` itself holds.
  const InputFacts* facts = nullptr;
  // What the cluster says (rules/cluster_facts.h): its nodes, NodePools,
  // namespaces and DRA objects. Null: no facts, every rule judges as if
  // there were no cluster to ask.
  const ClusterFacts* cluster = nullptr;
  // Where pods of one workload can go, kept between calls (rules/reach_cache.h);
  // used with `cluster` when the object is the whole input (`facts` null).
  // The caller clears it when the cluster facts or the policy change.
  ReachCache* reachCache = nullptr;
};

// Runs every enabled rule on `object`. Findings come in rule order, then in
// document order within a rule. A finding an ignore.gpuguard.io/<rule>
// annotation covers comes back marked `suppressed`, with the reason, so a
// front end can list and count it; whether annotations count at all is the
// front end's decision (forgetSuppressions).
std::vector<Finding> judge(const nlohmann::json& object, const Policy& policy, const JudgeOptions& options = {});

// Drops the suppression marks: for a front end whose policy does not let
// annotations silence rules.
void forgetSuppressions(std::vector<Finding>& findings);

// True when any unsuppressed finding is an error.
bool hasErrors(const std::vector<Finding>& findings);

// The annotation prefix that suppresses a rule on an object or pod template:
// ignore.gpuguard.io/<rule-id>: "<reason>".
inline constexpr const char* kSuppressionPrefix = "ignore.gpuguard.io/";

}  // namespace gpuguard
