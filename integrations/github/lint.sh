#!/usr/bin/env bash
# The lint step of action.yml: gpuguard-lint on the given paths, once for GitHub annotations
# in the log and once for the SARIF report that upload-sarif sends to code scanning.
#   GPUGUARD_PATHS             files and directories, separated by blanks or newlines
#   GPUGUARD_CONFIG            a policy file, or empty
#   GPUGUARD_SARIF             the SARIF file to write
#   GPUGUARD_FAIL_ON_FINDINGS  true: exit 1 on error findings; false: exit 0 then
# Writes sarif-file, exit-code and errors to $GITHUB_OUTPUT. Unreadable input (exit 2)
# always fails the step.
set -uo pipefail
read -r -d '' -a paths <<<"${GPUGUARD_PATHS:-.}"
((${#paths[@]})) || paths=(.)
args=()
[[ -z ${GPUGUARD_CONFIG:-} ]] || args+=(--config "$GPUGUARD_CONFIG")
sarif=${GPUGUARD_SARIF:-gpuguard.sarif}
out=${GITHUB_OUTPUT:-/dev/null}
mkdir -p "$(dirname "$sarif")"

# Annotations on the pull request (and the findings in the log).
gpuguard-lint "${args[@]}" --format github "${paths[@]}"
rc=$?
# The report for code scanning; the same findings.
gpuguard-lint "${args[@]}" --format sarif --output "$sarif" "${paths[@]}" >/dev/null 2>&1
sarif_rc=$?
if ((sarif_rc != rc)); then
  echo "gpuguard: the SARIF run exited $sarif_rc, the annotation run $rc" >&2
  ((sarif_rc > rc)) && rc=$sarif_rc
fi
errors=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]["results"]; print(sum(1 for x in r if x.get("level")=="error"))' "$sarif" 2>/dev/null || echo 0)
{
  echo "sarif-file=$sarif"
  echo "exit-code=$rc"
  echo "errors=$errors"
} >>"$out"
echo "gpuguard: exit $rc, $errors error finding(s), SARIF in $sarif"
case $rc in
  0) exit 0 ;;
  1) [[ ${GPUGUARD_FAIL_ON_FINDINGS:-true} == true ]] && exit 1 || exit 0 ;;
  *) exit "$rc" ;;
esac
