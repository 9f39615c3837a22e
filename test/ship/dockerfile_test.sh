#!/usr/bin/env bash
# The Dockerfile, tested without a Docker engine:
#   - its shape: two stages (debian:bookworm build, debian:bookworm-slim runtime),
#     a numeric non-root USER, ENTRYPOINT ["gpuguard-webhook"], no HEALTHCHECK,
#     the CMake build with tests off for both binaries;
#   - the build stage's packages are the ones this machine builds with;
#   - every shared library `ldd` lists for the two binaries belongs to a Debian
#     package the runtime stage installs (or bookworm-slim already has);
#   - with GPUGUARD_SHIP_DOCKER_BUILD=1, the build stage's RUN steps (all but
#     apt-get) run as a script on a copy of the build context, and the ldd
#     check runs on the binaries they produce: the image's own binaries.
#
#   test/ship/dockerfile_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
# shellcheck disable=SC2034
TEST_NAME=dockerfile
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
DOCKERFILE=$REPO/Dockerfile
DOCKERIGNORE=$REPO/.dockerignore
[[ -f $DOCKERFILE ]] || { fail "no Dockerfile at $DOCKERFILE"; finish; }

# Instructions, one per line: continuation lines joined, comments dropped.
# Each line is "STAGE<TAB>INSTRUCTION<TAB>ARGUMENTS" (STAGE counts from 0).
INSTR=$SHIP_TMP/instructions.tsv
awk '
  BEGIN { stage = -1; buf = "" }
  /^[[:space:]]*#/ && buf == "" { next }
  /^[[:space:]]*$/ && buf == "" { next }
  /^[[:space:]]*#/ { next }                     # a comment inside a continued instruction
  {
    line = $0
    if (line ~ /\\[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", line); buf = buf line " "; next }
    buf = buf line
    sub(/^[[:space:]]+/, "", buf)
    word = toupper(buf); sub(/[[:space:]].*/, "", word)
    rest = buf; sub(/^[^[:space:]]+[[:space:]]*/, "", rest)
    if (word == "FROM") stage++
    gsub(/[[:space:]]+/, " ", rest)
    printf "%d\t%s\t%s\n", stage, word, rest
    buf = ""
  }
' "$DOCKERFILE" >"$INSTR"

last_stage=$(awk -F'\t' 'END { print $1 }' "$INSTR")
froms=$(awk -F'\t' '$2 == "FROM" { print $3 }' "$INSTR")
from0=$(sed -n 1p <<<"$froms")
fromN=$(sed -n '$p' <<<"$froms")

# ---- shape ---------------------------------------------------------------------------

check "two stages (build and runtime), got $((last_stage + 1))" test "$last_stage" -eq 1
if [[ $from0 =~ ^debian:bookworm[[:space:]]+(AS|as)[[:space:]]+([A-Za-z0-9_-]+)$ ]]; then
  BUILD_STAGE_NAME=${BASH_REMATCH[2]}
  ok "build stage: FROM debian:bookworm AS $BUILD_STAGE_NAME"
else
  BUILD_STAGE_NAME=build
  fail "build stage must be 'FROM debian:bookworm AS <name>', got '$from0'"
fi
check "runtime stage: FROM debian:bookworm-slim (got '$fromN')" test "$fromN" = "debian:bookworm-slim"

user=$(awk -F'\t' -v s="$last_stage" '$1 == s && $2 == "USER" { u = $3 } END { print u }' "$INSTR")
if [[ $user =~ ^([0-9]+)(:([0-9]+))?$ ]] && ((BASH_REMATCH[1] != 0)) && [[ -z ${BASH_REMATCH[3]} || ${BASH_REMATCH[3]} != 0 ]]; then
  ok "runtime USER is numeric and not root ($user)"
else
  fail "runtime USER must be a numeric non-root uid[:gid] (runAsNonRoot needs a number), got '${user:-none}'"
fi
check "USER 65532:65532, the uid/gid manifests/base/deployment.yaml runs as (got '$user')" test "$user" = "65532:65532"

entry=$(awk -F'\t' -v s="$last_stage" '$1 == s && $2 == "ENTRYPOINT" { e = $3 } END { print e }' "$INSTR")
check "ENTRYPOINT [\"gpuguard-webhook\"] exactly (got '$entry')" test "$entry" = '["gpuguard-webhook"]'
cmd=$(awk -F'\t' -v s="$last_stage" '$1 == s && $2 == "CMD" { print $3 }' "$INSTR")
check "no CMD in the runtime stage (the Deployment passes the flags)" test -z "$cmd"
check "no HEALTHCHECK (Kubernetes probes /healthz and /readyz)" \
  test "$(awk -F'\t' '$2 == "HEALTHCHECK"' "$INSTR" | wc -l)" -eq 0

copies=$(awk -F'\t' -v s="$last_stage" '$1 == s && $2 == "COPY" { print $3 }' "$INSTR")
check "the runtime stage copies only from the build stage" \
  test -z "$(grep -v -- "--from=$BUILD_STAGE_NAME" <<<"$copies" | grep -v '^$')"
for b in gpuguard-webhook gpuguard-lint; do
  check "the runtime stage puts $b in /usr/local/bin" \
    grep -qE "(^|[ /])$b( .*)? /usr/local/bin/?\$" <<<"$copies"
done

build_runs=$(awk -F'\t' '$1 == 0 && $2 == "RUN" { print $3 }' "$INSTR")
check "the build stage runs cmake with -DGPUGUARD_BUILD_TESTS=OFF" grep -q -- "-DGPUGUARD_BUILD_TESTS=OFF" <<<"$build_runs"
check "the build stage builds gpuguard-webhook and gpuguard-lint" \
  grep -qE -- "--target( [a-z-]+)* gpuguard-webhook" <<<"$build_runs"
check "the build stage builds gpuguard-lint" grep -qE -- "--target( [a-z-]+)* gpuguard-lint" <<<"$build_runs"

# apt_packages STAGE : the packages the stage's `apt-get install` lines name
apt_packages() {
  awk -F'\t' -v s="$1" '$1 == s && $2 == "RUN" { print $3 }' "$INSTR" |
    grep -oE 'apt-get install [^&;|]*' | sed 's/^apt-get install//' | tr ' ' '\n' |
    grep -vE '^(-.*|)$' | sort -u
}
BUILD_PKGS=$(apt_packages 0)
RUNTIME_PKGS=$(apt_packages "$last_stage")
check "the runtime stage installs packages with --no-install-recommends" \
  grep -q -- "--no-install-recommends" <<<"$(awk -F'\t' -v s="$last_stage" '$1 == s && $2 == "RUN"' "$INSTR")"
check "the runtime stage installs no -dev package" test -z "$(grep -- '-dev$' <<<"$RUNTIME_PKGS")"
check "the runtime stage cleans the apt lists" \
  grep -q "rm -rf /var/lib/apt/lists" <<<"$(awk -F'\t' -v s="$last_stage" '$1 == s && $2 == "RUN"' "$INSTR")"

# The build dependencies CMakeLists.txt finds for the binaries, as Debian packages; and no
# dependency without a user: the tests' cpp-httplib, GoogleTest and Google Benchmark stay out
# (the image builds with -DGPUGUARD_BUILD_TESTS=OFF).
for p in cmake g++ make pkg-config libssl-dev nlohmann-json3-dev libyaml-cpp-dev libre2-dev; do
  check "the build stage installs $p" grep -qx -- "$p" <<<"$BUILD_PKGS"
done
for p in libcpp-httplib-dev libgtest-dev libgmock-dev libbenchmark-dev; do
  check "the build stage does not install $p (only the tests or benchmarks use it)" not grep -qx -- "$p" <<<"$BUILD_PKGS"
done
if command -v dpkg-query >/dev/null; then
  missing=()
  for p in $BUILD_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  check "every build-stage package exists on this (Debian) machine: missing ${missing[*]:-none}" test ${#missing[@]} -eq 0
fi

# ---- .dockerignore ----------------------------------------------------------------------

if [[ -f $DOCKERIGNORE ]]; then
  for p in .git build certs/out; do
    check ".dockerignore keeps $p out of the build context" grep -qxF "$p" "$DOCKERIGNORE"
  done
else
  fail "no .dockerignore: build trees, .git and certs/out (private keys) would be sent to the daemon"
fi

# ---- ldd: the runtime stage has every library the binaries load --------------------------

# bookworm-slim's own packages that binaries commonly load (apt needs them).
SLIM_BASE="libc6 libgcc-s1 libstdc++6"

# package_of SOFILE : the Debian package that ships a resolved library path
package_of() {
  local f=$1 real cand pkg
  real=$(readlink -f "$f" 2>/dev/null || echo "$f")
  for cand in "$f" "$real" "${f#/usr}" "/usr$f" "${real#/usr}" "/usr$real"; do
    pkg=$(dpkg -S "$cand" 2>/dev/null | head -n 1 | cut -d: -f1)
    [[ -n $pkg ]] && { echo "$pkg"; return 0; }
  done
  return 1
}

# check_ldd LABEL ALL BINARY... : ALL=1 when BINARY... are both binaries (then the
# runtime stage must also install nothing they do not load)
check_ldd() {
  local label=$1 all=$2; shift 2
  local bin lib path pkg problems=() needed=()
  for bin in "$@"; do
    local out
    out=$(ldd "$bin" 2>&1) || { fail "ldd $bin: $out"; continue; }
    if grep -q "not found" <<<"$out"; then
      fail "ldd $bin: unresolved libraries: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ')"
    fi
    while read -r lib path; do
      [[ -n $path && -e $path ]] || continue
      if pkg=$(package_of "$path"); then
        needed+=("$pkg:${lib}")
      else
        problems+=("$lib ($path) belongs to no Debian package")
      fi
    done < <(awk '/=>/ { print $1, $3; next } /^\s*\// { print $1, $1 }' <<<"$out")
  done
  local entry
  for entry in $(printf '%s\n' "${needed[@]}" | sort -u); do
    pkg=${entry%%:*} lib=${entry#*:}
    pkg=${pkg%%:*}
    if grep -qx -- "$pkg" <<<"$RUNTIME_PKGS" || [[ " $SLIM_BASE " == *" $pkg "* ]]; then
      :
    else
      problems+=("$lib comes from $pkg, which the runtime stage does not install")
    fi
  done
  if ((${#problems[@]} == 0)); then
    local pkgs
    pkgs=$(printf '%s\n' "${needed[@]}" | cut -d: -f1 | sort -u | tr '\n' ' ')
    ok "$label: every library ldd lists comes from a package the runtime stage has (${pkgs% })"
  else
    local p
    for p in "${problems[@]}"; do fail "$label: $p"; done
  fi
  # And the runtime stage installs nothing the binaries do not load.
  ((all)) || return 0
  local used
  used=$(printf '%s\n' "${needed[@]}" | cut -d: -f1 | sort -u)
  for pkg in $RUNTIME_PKGS; do
    grep -qx -- "$pkg" <<<"$used" || fail "$label: the runtime stage installs $pkg, which neither binary loads (drop it)"
  done
}

if ! command -v ldd >/dev/null || ! command -v dpkg >/dev/null; then
  skip "ldd check: needs ldd and dpkg (a Debian machine)"
else
  if sanitizer_build "$BUILD"; then
    skip "ldd check on $BUILD: a sanitizer build loads libasan/libubsan, the image is built without them"
  else
    bins=()
    for b in gpuguard-webhook gpuguard-lint; do
      f=$(find_binary "$BUILD" "$b")
      if [[ -n $f ]]; then
        bins+=("$f")
      elif cmake_defines_target "$BUILD" "$b"; then
        fail "$b is a CMake target in $BUILD but is not built (build it first)"
      else
        skip "$b: no such CMake target in $BUILD yet (nothing to check)"
      fi
    done
    all=0; ((${#bins[@]} == 2)) && all=1
    if ((${#bins[@]} > 0)); then check_ldd "ldd of $BUILD binaries" "$all" "${bins[@]}"; fi
  fi
fi

# ---- optional: the build stage's RUN steps as a script ------------------------------------

if [[ ${GPUGUARD_SHIP_DOCKER_BUILD:-0} == 1 ]]; then
  workdir=$(awk -F'\t' '$1 == 0 && $2 == "WORKDIR" { w = $3 } END { print w }' "$INSTR")
  ctx=$SHIP_TMP/context
  src=$SHIP_TMP/src
  out=$SHIP_TMP/out
  mkdir -p "$ctx" "$src" "$out"
  # The build context: the checkout's files less what .dockerignore excludes.
  patterns=()
  while IFS= read -r p; do
    p=${p%%#*}; p=${p%"${p##*[![:space:]]}"}; p=${p%/}
    [[ -n $p ]] && patterns+=("$p")
  done <"$DOCKERIGNORE"
  while IFS= read -r f; do
    skipit=0
    for p in "${patterns[@]}"; do
      # shellcheck disable=SC2053
      if [[ $f == $p || $f == $p/* || ${f%%/*} == $p ]]; then skipit=1; break; fi
      # shellcheck disable=SC2053
      # shellcheck disable=SC2053
      if [[ $p == '**/'* ]]; then [[ ${f##*/} == ${p#**/} ]] && { skipit=1; break; }; fi
    done
    ((skipit)) || { mkdir -p "$ctx/$(dirname "$f")"; cp -p "$REPO/$f" "$ctx/$f"; }
  done < <(git -C "$REPO" ls-files --cached --others --exclude-standard)
  cp -a "$ctx/." "$src/"
  script=$SHIP_TMP/build-stage.sh
  {
    echo "set -e"
    echo "cd '$src'"
    awk -F'\t' '$1 == 0 && $2 == "RUN" { print $3 }' "$INSTR" | grep -v 'apt-get' |
      sed -e "s#${workdir:-/src}#$src#g" -e "s#/out#$out#g"
  } >"$script"
  echo "# running the build stage's RUN steps ($script):"
  sed 's/^/#   /' "$script"
  if bash "$script" >"$SHIP_TMP/build.log" 2>&1; then
    ok "the build stage's RUN steps build both binaries from the build context"
    for b in gpuguard-webhook gpuguard-lint; do check "the build stage leaves $b for the runtime stage" test -x "$out/$b"; done
    if [[ -x $out/gpuguard-webhook && -x $out/gpuguard-lint ]]; then
      check_ldd "ldd of the image's binaries" 1 "$out/gpuguard-webhook" "$out/gpuguard-lint"
      check "the image's gpuguard-lint runs (--version)" quiet "$out/gpuguard-lint" --version
    fi
  else
    fail "the build stage's RUN steps failed; last lines:"
    tail -n 30 "$SHIP_TMP/build.log" | sed 's/^/#   /'
  fi
else
  skip "the build stage as a script (set GPUGUARD_SHIP_DOCKER_BUILD=1; a full Release build)"
fi

finish
