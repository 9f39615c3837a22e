#!/usr/bin/env python3
"""Print the ValidatingWebhookConfiguration (or KIND) of `kubectl kustomize <dir>` with every
webhook's clientConfig replaced by `url: URL` + `caBundle: <base64 of CA_FILE>`, so the
shipped configuration can be registered against a webhook on 127.0.0.1 (no Service, no kubelet).

usage: shipped-vwc.py RENDERED_YAML URL CA_FILE [KIND]
"""
import base64
import re
import sys


def main(rendered, url, ca_file, kind="ValidatingWebhookConfiguration"):
    text = open(rendered).read()
    docs = re.split(r"^---\s*$", text, flags=re.M)
    vwc = [d for d in docs if re.search(r"^kind:\s*" + re.escape(kind) + r"\s*$", d, re.M)]
    if len(vwc) != 1:
        sys.exit("shipped-vwc: expected one %s, found %d" % (kind, len(vwc)))
    bundle = base64.b64encode(open(ca_file, "rb").read()).decode()
    out, lines, i = [], vwc[0].splitlines(), 0
    replaced = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(\s*)(- )?clientConfig:\s*$", line)
        if not m:
            out.append(line)
            i += 1
            continue
        indent = len(m.group(1)) + (2 if m.group(2) else 0)
        out.append(line)
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            i += 1
        out.append(" " * (indent + 2) + "url: " + url)
        out.append(" " * (indent + 2) + "caBundle: " + bundle)
        replaced += 1
    if not replaced:
        sys.exit("shipped-vwc: no clientConfig found")
    body = "\n".join(out).strip("\n")
    # for the caller: the configuration's name and its webhooks' names
    names = re.findall(r"^\s*(?:- )?name:\s*(\S+)\s*$", body, re.M)
    meta = re.search(r"^metadata:\s*\n(?:\s+.*\n)*?\s+name:\s*(\S+)", body + "\n", re.M)
    hooks = [n for n in names if "." in n]
    print("# configuration: %s" % (meta.group(1) if meta else ""))
    print("# webhooks: %s" % " ".join(hooks))
    print(body)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(*sys.argv[1:])
