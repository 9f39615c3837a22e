#!/usr/bin/env python3
"""Lints every manifests/examples/*.yaml and compares with what the file expects.

    check_examples.py GPUGUARD_LINT POLICY EXAMPLES_DIR

An example states its expected findings where they are reported, as a comment
on that line:

    nvidia.com/gpu: 0.5   # expect: gpu-fractional

(several: "# expect: rule-a, rule-b"). The findings gpuguard-lint reports must be
exactly those, rule id and line, no more and no fewer. good-*.yaml expect none,
bad-*.yaml at least one. Prints "ok - "/"FAIL - " lines; exits 0.
"""
import collections
import glob
import json
import os
import re
import subprocess
import sys

MARK = re.compile(r"#\s*expect:\s*(.+?)\s*$")
RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def check(ok, what):
    print(("ok - " if ok else "FAIL - ") + what)


def expected(path):
    want = collections.Counter()
    bad = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = MARK.search(line)
            if not m:
                continue
            for rule in (r.strip() for r in m.group(1).split(",")):
                if RULE.match(rule):
                    want[(rule, n)] += 1
                else:
                    bad.append(f"line {n}: {rule!r}")
    return want, bad


def main():
    lint, policy, examples = sys.argv[1:4]
    files = sorted(glob.glob(os.path.join(examples, "*.yaml")))
    check(len(files) >= 8, f"{len(files)} examples in {examples}")
    known = set()
    out = subprocess.run([lint, "--list-rules"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.strip():
            known.add(line.split()[0])
    for path in files:
        name = os.path.basename(path)
        want, bad = expected(path)
        check(not bad, f"{name}: expectations are rule ids ({', '.join(bad) or 'all'})")
        unknown = sorted({r for r, _ in want} - known)
        check(not unknown, f"{name}: expected rules exist ({', '.join(unknown) or 'all'})")
        if name.startswith("good-"):
            check(not want, f"{name}: a good example expects no finding")
        elif name.startswith("bad-"):
            check(want, f"{name}: a bad example expects at least one finding")
        else:
            check(False, f"{name}: examples are named good-*.yaml or bad-*.yaml")
        proc = subprocess.run([lint, "--format", "json", "--config", policy, path], capture_output=True, text=True)
        try:
            report = json.loads(proc.stdout)
        except json.JSONDecodeError:
            check(False, f"{name}: gpuguard-lint printed no JSON (exit {proc.returncode}): {proc.stderr.strip()}")
            continue
        check(not report.get("errors"), f"{name}: reads without input errors {report.get('errors') or ''}")
        got = collections.Counter((f["rule"], f["line"]) for f in report.get("findings", []))
        fmt = lambda c: ", ".join(f"{r}@{l}" + (f" x{k}" if k > 1 else "") for (r, l), k in sorted(c.items(), key=lambda x: (x[0][1], x[0][0]))) or "none"
        check(got == want,
              f"{name}: findings are exactly {fmt(want)}"
              + ("" if got == want else f"; got {fmt(got)} (missing: {fmt(want - got)}; unexpected: {fmt(got - want)})"))
        errors = sum(1 for f in report.get("findings", []) if f.get("severity") == "error")
        want_rc = 1 if errors else 0
        check(proc.returncode == want_rc, f"{name}: exit status {want_rc} (got {proc.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
