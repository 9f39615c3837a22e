#!/usr/bin/env bash
# The API server as an oracle for gpuguard-lint (see oracle.py for what is compared).
#
#   bash test/e2e/oracle.sh [--update-doc]
#
# Starts etcd + kube-apiserver (controlplane/go.mod) on 127.0.0.1 (no webhook registered), sends every
# built-in workload document of test/e2e/cases/ and ../shared/corpus/real/ (relative to the
# repo) through `kubectl apply --dry-run=server`, and compares with `gpuguard-lint --format json`.
# --update-doc rewrites the generated part of docs/e2e-oracle.md.
#
#   GPUGUARD_LINT     linter binary (default <repo>/build/gpuguard-lint)
#   GPUGUARD_CORPUS   corpus dir (default <repo>/../shared/corpus/real); missing: cases only
#   ORACLE_REPORT     where to write the markdown report (default: inside the work dir)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"
T0=$SECONDS
UPDATE_DOC=0
[[ ${1:-} == --update-doc ]] && UPDATE_DOC=1

CORPUS=${GPUGUARD_CORPUS:-$ROOT/../shared/corpus/real}
e2e_oracle_setup oracle || exit 1
e2e_oracle "$LINT" "$CORPUS" "${ORACLE_REPORT:-$E2E_WORK/oracle.md}" "$UPDATE_DOC"
rc=$?
read -r passed failed <<<"$E2E_ORACLE_COUNTS"
echo "oracle: took $((SECONDS - T0)) s"
echo "$passed passed, $failed failed"
exit $rc
