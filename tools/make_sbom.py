#!/usr/bin/env python3
"""Writes the release's SBOM (SPDX 2.3, JSON). The binaries are static, so a scanner that
reads a package database or the dynamic section finds nothing in them: this SBOM says what
they contain, the Debian packages whose static archives and headers the link pulled in
(glibc, libstdc++, OpenSSL, RE2, yaml-cpp, nlohmann-json), at the versions installed on the
build machine, and the SHA-256 of every artifact.

    tools/make_sbom.py --version V --commit C --out FILE ARTIFACT...

Stdlib only; dpkg-query gives the versions (a package not installed is left out and named
on stderr). Deterministic for one commit: the creation time is SOURCE_DATE_EPOCH.
"""
import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys

# What cmake/static.cmake links, by the Debian package that ships the archive or headers.
LINKED = ["libc6-dev", "libstdc++-12-dev", "libgcc-12-dev", "libssl-dev", "libre2-dev",
          "libyaml-cpp-dev", "nlohmann-json3-dev"]


def dpkg_version(package):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}\t${Source}", package],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.split("\t")[0] or None


def spdx_id(name):
    return "SPDXRef-" + "".join(c if c.isalnum() or c in ".-" else "-" for c in name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("artifacts", nargs="+")
    args = parser.parse_args()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    root = "SPDXRef-gpuguard"
    packages = [{
        "SPDXID": root, "name": "gpuguard", "versionInfo": args.version,
        "downloadLocation": "NOASSERTION", "licenseConcluded": "Apache-2.0",
        "licenseDeclared": "Apache-2.0", "copyrightText": "NOASSERTION",
        "sourceInfo": f"built from commit {args.commit}", "filesAnalyzed": False,
        "primaryPackagePurpose": "APPLICATION",
    }]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": root}]
    for package in LINKED:
        version = dpkg_version(package)
        if version is None:
            print(f"make_sbom: {package} is not installed; left out", file=sys.stderr)
            continue
        ident = spdx_id("deb-" + package)
        packages.append({
            "SPDXID": ident, "name": package, "versionInfo": version,
            "downloadLocation": "NOASSERTION", "licenseConcluded": "NOASSERTION",
            "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION", "filesAnalyzed": False,
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": f"pkg:deb/debian/{package}@{version}?distro=debian-12"}],
        })
        relationships.append({"spdxElementId": root, "relationshipType": "STATIC_LINK",
                              "relatedSpdxElement": ident})
    files = []
    for path in args.artifacts:
        name = os.path.basename(path)
        files.append({"SPDXID": spdx_id("file-" + name), "fileName": "./" + name,
                      "checksums": [{"algorithm": "SHA256",
                                     "checksumValue": hashlib.sha256(open(path, "rb").read()).hexdigest()}],
                      "licenseConcluded": "NOASSERTION", "copyrightText": "NOASSERTION"})
        relationships.append({"spdxElementId": root, "relationshipType": "GENERATES",
                              "relatedSpdxElement": spdx_id("file-" + name)})
    doc = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"gpuguard-{args.version}",
        "documentNamespace": f"https://spdx.org/spdxdocs/gpuguard-{args.version}-{args.commit}",
        "creationInfo": {"created": created, "creators": ["Tool: gpuguard tools/make_sbom.py"]},
        "packages": packages, "files": files, "relationships": relationships,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
