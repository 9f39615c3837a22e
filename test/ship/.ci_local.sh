#!/usr/bin/env bash
# Behaviour preservation (issue 14, item 9): the linter's output over the real
# manifests corpus (../shared/corpus/real), manifests/examples and the e2e cases
# must stay byte-identical across a refactoring.
#
#   test/ship/corpus_identity.sh LINT                 compare LINT with the stored baseline
#   test/ship/corpus_identity.sh --capture LINT       (re)write the stored baseline from LINT
#   test/ship/corpus_identity.sh LINT OTHER_LINT      compare two binaries with each other
#
# For each input set it records `--format json` (findings, errors, summary) and
# `--fix --dry-run` (the unified diff --fix would write, plus its notes on stderr)
# and the Pending diagnosis against test/data/snapshots (`--nodes`, `--pods`),
# each file on its own so a difference names the file. A set whose directory is
# missing (the corpus outside the repository, on a fresh clone) is skipped, and
# the script says so. The baselines (test/data/corpus-baseline/*.txt.gz) are
# captured from the build before a refactoring; a change that alters output on
# purpose recaptures them and lists the difference in its commit message.
set -uo pipefail
cd "$(dirname "$0")/../.."

capture=0
if [ "${1:-}" = --capture ]; then capture=1; shift; fi
lint=${1:?usage: corpus_identity.sh [--capture] LINT [OTHER_LINT]}
other=${2:-}
baseline=test/data/corpus-baseline

sets=("corpus:/work/shared/corpus/real" "examples:manifests/examples" "e2e-cases:test/e2e/cases"
      "snapshots:test/data/snapshots")

# Prints what LINT says about every YAML/JSON file under DIR, one block per file.
record() {
  local bin=$1 dir=$2 f
  while IFS= read -r f; do
    printf '=== %s json\n' "$f"
    "$bin" --format json "$f" 2>&1
    printf '=== exit %s\n' "$?"
    printf '=== %s fix\n' "$f"
    "$bin" --fix --dry-run "$f" 2>&1
    printf '=== exit %s\n' "$?"
    printf '=== %s pending\n' "$f"
    "$bin" --format json --nodes test/data/snapshots/nodes.json --pods test/data/snapshots/pods.json "$f" 2>&1
    printf '=== exit %s\n' "$?"
  done < <(find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) | LC_ALL=C sort)
}

status=0
for entry in "${sets[@]}"; do
  name=${entry%%:*} dir=${entry#*:}
  if [ ! -d "$dir" ]; then
    echo "corpus_identity: $name: $dir not found, skipped"
    continue
  fi
  out=$(mktemp)
  record "$lint" "$dir" > "$out"
  if [ "$capture" = 1 ]; then
    gzip -9n < "$out" > "$baseline/$name.txt.gz" && chmod 644 "$baseline/$name.txt.gz"
    echo "corpus_identity: $name: baseline written ($(grep -c '^=== .* json$' "$out") files)"
    rm -f "$out"
    continue
  fi
  if [ -n "$other" ]; then
    ref=$(mktemp); record "$other" "$dir" > "$ref"
  else
    ref=$(mktemp); gunzip < "$baseline/$name.txt.gz" > "$ref"
  fi
  if diff -u "$ref" "$out" > "$out.diff"; then
    echo "corpus_identity: $name: identical ($(grep -c '^=== .* json$' "$out") files)"
  else
    echo "corpus_identity: $name: DIFFERENT"; head -100 "$out.diff"; status=1
  fi
  rm -f "$out" "$out.diff" "$ref"
done
exit $status
