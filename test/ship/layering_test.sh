#!/usr/bin/env bash
# The architecture in the README, as a test: every #include between the
# modules follows one of the one-way arrows drawn there, and the checks are
# reached only through the registry.
#
#   test/ship/layering_test.sh
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=layering
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

# module: the modules it may include (besides itself). rules/k8s is the model of
# Kubernetes at the bottom, text (UTF-8, ASCII case, edit distance) beside it;
# rules/ in three floors: the engine, then what the rules know (rules/nvidia,
# rules/serving) and share (rules/support), then the rules (rules/checks), reached
# only through rules/registry.cpp.
declare -A allowed=(
  [text]=""
  [rules/k8s]=""
  [rules]="rules/k8s text"
  [rules/nvidia]="rules rules/k8s"
  [rules/serving]="rules rules/k8s text"
  [rules/support]="rules rules/k8s text"
  [rules/checks]="rules rules/k8s rules/nvidia rules/serving rules/support text"
  [schedule]="rules rules/k8s rules/nvidia"
  [yaml]="rules rules/k8s text"
  [cluster]="rules rules/k8s yaml"
  [lint]="rules rules/k8s cluster schedule yaml text"
  [webhook]="rules rules/k8s cluster yaml text https audit"
  [audit]="rules rules/k8s cluster text"
  [https]=""
)

# The module of a path (rules/k8s/x.h -> rules/k8s, rules/x.h -> rules).
module_of() {
  case $1 in
    rules/k8s/*) echo rules/k8s ;;
    rules/pods/*) echo rules ;;  # the operator adapters of the engine's walk (rules/pods/walker.h)
    rules/nvidia/*) echo rules/nvidia ;;
    rules/serving/*) echo rules/serving ;;
    rules/support/*) echo rules/support ;;
    rules/checks/*) echo rules/checks ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;;  # gpuguard_version.h and the like: generated, no module
  esac
}

broken=()
for from in "${!allowed[@]}"; do
  while IFS= read -r -d '' file; do
    [[ $(module_of "$file") == "$from" ]] || continue
    while IFS= read -r included; do
      to=$(module_of "$included")
      [[ -z $to || $to == "$from" ]] && continue
      if [[ " ${allowed[$from]} " != *" $to "* ]]; then
        [[ $from == rules && $to == rules/checks && $file == rules/registry.cpp ]] && continue
        broken+=("$file includes $included ($from -> $to is not an arrow of the README's architecture)")
      fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
  done < <(find "$from" -type f \( -name '*.cpp' -o -name '*.h' \) -print0)
done

# A module's internal/ folder is its own: no other module includes from it
# (https/internal/: the event loops, connections, HTTP/1.1 framing; only its
# tests and fuzzer look inside).
while IFS= read -r -d '' file; do
  while IFS= read -r included; do
    owner=${included%%/internal/*}
    [[ $file == "$owner"/* ]] || broken+=("$file includes $included (internal to $owner/)")
  done < <(sed -n 's/^#include "\([^"]*\/internal\/[^"]*\)".*/\1/p' "$file")
done < <(find "${!allowed[@]}" -type f \( -name '*.cpp' -o -name '*.h' \) -print0)

if ((${#broken[@]} == 0)); then
  ok "every include follows an arrow: text, rules/k8s <- rules <- {rules/nvidia, rules/serving, rules/support} <- rules/checks; rules <- {schedule, yaml} <- cluster <- {lint, audit <- webhook}; https <- webhook; no include of another module's internal/"
else
  for b in "${broken[@]}"; do fail "$b"; done
fi

# rules/checks holds exactly the rules: one .cpp per rule, the factories'
# header and the one-line registrations (registered.inc), and no check includes another check (what two rules share lives in
# rules/support, rules/nvidia or rules/serving).
strays=() crossed=()
while IFS= read -r -d '' file; do
  [[ $file == rules/checks/checks.h || $file == rules/checks/registered.inc || $file == *.cpp ]] || strays+=("$file")
  while IFS= read -r included; do
    [[ $included == rules/checks/* && $included != rules/checks/checks.h && $included != rules/checks/registered.inc ]] &&
      crossed+=("$file includes $included")
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find rules/checks -type f -print0)
if ((${#strays[@]} == 0)); then
  ok "rules/checks holds only rules (one .cpp each), checks.h and registered.inc"
else
  for s in "${strays[@]}"; do fail "$s is not a rule: move it to rules/support, rules/nvidia or rules/serving"; done
fi
if ((${#crossed[@]} == 0)); then
  ok "no check includes another check"
else
  for c in "${crossed[@]}"; do fail "$c (a check includes no other check: share through rules/support)"; done
fi

# The walk's internals (rules/pods/walker.h) are fenced: only the generic
# walk and the operator adapters beside it include them.
fenced=$(grep -rl --include='*.cpp' --include='*.h' '#include "rules/pods/walker.h"' . 2>/dev/null |
  sed 's|^\./||' | grep -v -e '^rules/pods/' -e '^rules/pod_specs.cpp$' || true)
if [[ -z $fenced ]]; then
  ok "rules/pods/walker.h is included only by rules/pod_specs.cpp and rules/pods/"
else
  for f in $fenced; do fail "$f includes rules/pods/walker.h, the walk's internals (use rules/pod_specs.h)"; done
fi

# The README draws the same arrows: each "<module>/ (...) --> <module>/ ..." line of
# its architecture block names exactly the modules allowed above.
declare -A drawn=()
while IFS= read -r line; do
  left=${line%%-->*} right=${line#*-->}
  right=${right%%rules/registry.cpp*}  # the registry's own arrow, checked above
  targets=$(for t in $right; do [[ $t == */ ]] && echo "${t%/}"; done | sort | tr '\n' ' ' | sed 's/ $//')
  for m in ${left//,/ }; do
    [[ $m == */ ]] && drawn[${m%/}]=$targets
  done
done < <(sed -n '/^## Architecture/,/^## /p' README.md | sed -n '/^```text/,/^```$/p' | grep -e '-->')
for m in "${!allowed[@]}"; do
  want=$(for t in ${allowed[$m]}; do echo "$t"; done | sort | tr '\n' ' ' | sed 's/ $//')
  if [[ -z ${drawn[$m]+set} ]]; then
    fail "the README's architecture draws no line for $m/"
  else
    check "the README draws $m/ --> ${want:-(nothing)} (drawn: ${drawn[$m]:-(nothing)})" test "${drawn[$m]}" = "$want"
  fi
done
for m in "${!drawn[@]}"; do
  [[ -n ${allowed[$m]+set} ]] || fail "the README's architecture draws $m/, which this test does not know"
done
finish
