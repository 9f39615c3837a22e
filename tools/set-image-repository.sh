#!/usr/bin/env bash
# Renames the published image everywhere at once: tools/release.env (what tools/release.sh and
# the release workflow push to) and every file that names it (the chart's values, the kustomize
# base, certs/make-certs.sh's image override, the docker pre-commit hook, the docs).
#
#   tools/set-image-repository.sh registry.example.com/your-org/gpuguard-webhook
#
# Replaces the current name (GPUGUARD_IMAGE_REPOSITORY in tools/release.env) wherever git tracks
# it, then prints the files it changed. test/ship/release_test.sh checks that no file names
# another one.
set -euo pipefail
cd "$(dirname "$0")/.."
new=${1:?usage: tools/set-image-repository.sh REGISTRY/ORG/NAME}
[[ $new =~ ^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+$ ]] ||
  { echo "set-image-repository: '$new' is not a fully qualified repository (REGISTRY/ORG/NAME, no tag)" >&2; exit 2; }
# shellcheck source=tools/release.env
source tools/release.env
old=$GPUGUARD_IMAGE_REPOSITORY
[[ $old != "$new" ]] || { echo "already $new"; exit 0; }
mapfile -t files < <(git grep -l -F "$old" -- . ':!CHANGELOG.md')
for f in "${files[@]}"; do
  python3 - "$f" "$old" "$new" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace(old, new))
PY
  echo "$f"
done
