#!/usr/bin/env python3
"""Repair the vendor/modules.txt shipped with Kubernetes 1.20 so Go >= 1.17 accepts it.

Kubernetes 1.20 generated modules.txt with package lines placed *after*
wildcard-replacement lines ("# path => path vX", no version on the left).  Go >= 1.17
attributes such packages to a module of version "", which it ranks above every real
version, so every -mod=vendor command fails with
"go: updates to go.mod needed, disabled by -mod=vendor".

The fix: re-attach every package line to the versioned module ("# path vX ...")
whose path is the longest prefix of the package, keep "## ..." annotations with the
module header they follow, and move all wildcard-replacement lines to the end.
go.mod and go.sum are not touched.  Idempotent: running it twice changes nothing.

usage: fix-modules-txt.py path/to/vendor/modules.txt
"""
import sys


def main(path):
    with open(path) as f:
        lines = f.read().splitlines()

    order = []          # versioned module paths in original order
    blocks = {}         # module path -> {"header": str, "annot": [str], "pkgs": [str]}
    wildcards = []      # "# path => ..." lines
    pkgs = []           # package lines, in original order
    current = None      # last versioned module header seen (for "## " lines)

    for ln in lines:
        if not ln.strip():
            continue
        if ln.startswith("## "):
            if current is None:
                sys.exit("fix-modules-txt: annotation before any module: %r" % ln)
            blocks[current]["annot"].append(ln)
        elif ln.startswith("# "):
            fields = ln[2:].split()
            if len(fields) >= 2 and fields[1] != "=>":
                mod = fields[0]
                if mod in blocks:
                    sys.exit("fix-modules-txt: module listed twice: %s" % mod)
                blocks[mod] = {"header": ln, "annot": [], "pkgs": []}
                order.append(mod)
                current = mod
            elif len(fields) >= 3 and fields[1] == "=>":
                wildcards.append(ln)
            else:
                sys.exit("fix-modules-txt: cannot parse %r" % ln)
        else:
            pkgs.append(ln.strip())

    moved = 0
    for pkg in pkgs:
        best = None
        for mod in blocks:
            if (pkg == mod or pkg.startswith(mod + "/")) and (best is None or len(mod) > len(best)):
                best = mod
        if best is None:
            sys.exit("fix-modules-txt: no versioned module for package %s" % pkg)
        blocks[best]["pkgs"].append(pkg)
        moved += 1

    out = []
    for mod in order:
        b = blocks[mod]
        out.append(b["header"])
        out.extend(b["annot"])
        out.extend(b["pkgs"])
    out.extend(wildcards)
    text = "\n".join(out) + "\n"
    with open(path) as f:
        old = f.read()
    if old != text:
        with open(path, "w") as f:
            f.write(text)
        print("fix-modules-txt: rewrote %s (%d packages re-attached, %d wildcard lines moved to the end)"
              % (path, moved, len(wildcards)))
    else:
        print("fix-modules-txt: %s already in order" % path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
