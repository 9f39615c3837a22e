#!/usr/bin/env bash
# Starts a new rule with everything the catalog demands of one (the meta-test
# test/unit/rules/rule_catalog_test.cpp fails until each is there):
#   rules/checks/<id>.cpp                     the check: its RuleDoc and check()
#   test/unit/rules/checks/<id>_test.cpp      its whole specification
#   rules/checks/registered.inc               its one registration line
# and says how docs/rules.md and the README rules table follow (they are
# generated from the RuleDoc). The new rule reports nothing yet, so
# EveryRule.ItsWrongExampleFiresItAlone... stays red until check() is written.
#
#   tools/new-rule.sh RULE-ID [--severity error|warning] [--judges whole-object|what-is-written]
#
#   RULE-ID     lower-case words joined by '-', at least two (gpu-foo-bar)
#   --severity  default severity (error)
#   --judges    whole-object (default): the rule also judges what is missing or adds up
#               the pod, so only a complete object can tell; what-is-written: it judges
#               values present, so a fragment (a kustomize patch) is judged too
#   GPUGUARD_ROOT  the tree to write into (default: this script's repository)
set -euo pipefail

usage() { sed -n '11,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "new-rule.sh: $*" >&2; exit 1; }

id=${1:-}
[[ -n $id && $id != -* ]] || usage
shift
severity=Error judges=WholeObject
while (($#)); do
  case $1 in
    --severity) case ${2:-} in error) severity=Error ;; warning) severity=Warning ;; *) usage ;; esac; shift 2 ;;
    --judges) case ${2:-} in whole-object) judges=WholeObject ;; what-is-written) judges=WhatIsWritten ;; *) usage ;; esac; shift 2 ;;
    *) usage ;;
  esac
done

[[ $id =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)+$ ]] ||
  die "\"$id\" is not a rule id: lower-case words of letters and digits joined by '-', at least two (gpu-foo-bar)"

root=${GPUGUARD_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
stem=${id//-/_}
camel=$(sed -E 's/(^|-)([a-z0-9])/\U\2/g' <<<"$id")
check=$root/rules/checks/$stem.cpp
test=$root/test/unit/rules/checks/${stem}_test.cpp
registry=$root/rules/checks/registered.inc

[[ -f $registry ]] || die "$registry not found (set GPUGUARD_ROOT to the repository)"
for f in "$check" "$test"; do [[ ! -e $f ]] || die "$f already exists"; done
! grep -q "^GPUGUARD_RULE($camel," "$registry" || die "$camel is already registered in $registry"
! grep -rqF ".id = \"$id\"" "$root/rules/checks" || die "a check with the id $id already exists in rules/checks/"

cat >"$check" <<EOF
// $id: TODO what it catches, and the Kubernetes or NVIDIA behaviour behind it
// (with its source: kubernetes-gpu-semantics.md §, the API server's code).
#include "rules/checks/checks.h"

namespace gpuguard::checks {
namespace {

constexpr RuleDoc kDoc{
    .id = "$id",
    .defaultSeverity = Severity::$severity,
    .summary = "TODO: one line, what it catches.",
    .description = "TODO: why it matters, what Kubernetes and NVIDIA do with such an object.",
    .remediation = "TODO: what to write instead.",
    .wrongExample = "TODO: YAML the rule reports (a whole object, spec:, or a container's resources:)\\n",
    .rightExample = "TODO: the same YAML, fixed\\n",
};

class $camel final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  // TODO: judge ctx.sites (every pod template of the object) and report what the
  // API server would say: out.report(path, FieldError::invalid(value, detail), value).
  void check(const CheckContext& ctx, Reporter& out) const override {
    (void)ctx;
    (void)out;
  }
};

}  // namespace

std::unique_ptr<Rule> make$camel() { return std::make_unique<$camel>(); }

}  // namespace gpuguard::checks
EOF

cat >"$test" <<EOF
// $id: its whole specification. TODO: what it reports (the field path and the
// API server's words), what it leaves alone, in Pods, workload templates and
// custom resources, and the fix it emits if any.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;

const Policy kRule = onlyRules({"$id"});

TEST($camel, APodThatAsksForNoGpuIsLeftAlone) {
  EXPECT_THAT(judgeYaml("apiVersion: v1\\nkind: Pod\\nmetadata: {name: p}\\nspec:\\n"
                        "  containers:\\n  - name: web\\n    image: nginx:1.27\\n",
                        kRule),
              IsEmpty());
}

}  // namespace
}  // namespace gpuguard
EOF

echo "GPUGUARD_RULE($camel, $judges)" >>"$registry"

cat <<EOF
new-rule.sh: created ${check#"$root"/}, ${test#"$root"/}; registered in ${registry#"$root"/}
Next:
  1. fill in the RuleDoc and check() in ${check#"$root"/}; write the specification in ${test#"$root"/}
  2. move its line in ${registry#"$root"/} to its place in the documentation order
  3. build, then test/lint/update_docs.sh (docs/rules.md and the README rules table)
  4. ctest -R 'EveryRule|$camel' : the catalog says what is still missing
EOF
