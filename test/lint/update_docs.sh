#!/usr/bin/env bash
# Regenerates what gpuguard-lint's rule registry generates in the repository:
#   docs/rules.md                      gpuguard-lint --rules-markdown
#   README.md between the markers      gpuguard-lint --rules-table
#     <!-- rules-table:begin --> ... <!-- rules-table:end -->
# Run it after adding or changing a rule (the unit tests
# LintCli.DocsRulesMdIsGeneratedFromTheRegistry and
# LintCli.TheReadmeRulesTableMatchesTheRegistry fail until you do).
#
#   test/lint/update_docs.sh [BUILD_DIR]     (default: build; builds gpuguard-lint first)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
if [[ -d $BUILD ]]; then
  cmake --build "$BUILD" --target gpuguard-lint >/dev/null
else
  ./build.sh >/dev/null
fi
LINT=$BUILD/gpuguard-lint

"$LINT" --rules-markdown > docs/rules.md.tmp && mv docs/rules.md.tmp docs/rules.md

table=$("$LINT" --rules-table)
python3 - "$table" <<'PY'
import sys
begin, end = "<!-- rules-table:begin -->", "<!-- rules-table:end -->"
table = sys.argv[1].rstrip("\n") + "\n"
text = open("README.md", encoding="utf-8").read()
b, e = text.find(begin), text.find(end)
if b < 0 or e < b:
    sys.exit("README.md: the markers %s and %s are missing (put them under '## Rules')" % (begin, end))
start = text.index("\n", b) + 1
open("README.md", "w", encoding="utf-8").write(text[:start] + table + text[e:])
PY
echo "updated docs/rules.md and the rules table in README.md"
