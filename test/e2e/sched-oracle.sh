#!/usr/bin/env bash
# kube-scheduler as an oracle for gpuguard (see sched_oracle.py for what is compared).
#
#   bash test/e2e/sched-oracle.sh [--update-doc]
#
# Starts etcd + kube-apiserver + kube-scheduler on 127.0.0.1 (no webhook), runs every case of
# scheduler/cases.yaml and compares the scheduler's verdicts with gpuguard-lint and
# gpuguard-lint --nodes. --update-doc rewrites the scheduler part of docs/e2e-oracle.md.
#
#   GPUGUARD_LINT       linter binary (default <repo>/build/gpuguard-lint)
#   SCHED_ORACLE_ONLY   run only the cases whose name contains this
#   SCHED_ORACLE_REPORT where to write the markdown report (default: inside the work dir)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"
T0=$SECONDS
UPDATE_DOC=0
[[ ${1:-} == --update-doc ]] && UPDATE_DOC=1

e2e_oracle_setup sched-oracle scheduler || exit 1
e2e_sched_oracle "$LINT" "${SCHED_ORACLE_REPORT:-$E2E_WORK/sched-oracle.md}" "$UPDATE_DOC"
rc=$?
read -r passed failed <<<"$E2E_SCHED_COUNTS"
echo "sched-oracle: took $((SECONDS - T0)) s"
echo "$passed passed, $failed failed"
exit $rc
