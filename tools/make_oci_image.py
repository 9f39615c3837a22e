#!/usr/bin/env python3
"""Writes gpuguard's container image without a container engine: an OCI image layout
(oci-layout, index.json, blobs/sha256/...) of one layer on an empty base (FROM scratch), and
the same layout as one tar that `docker load` (it has the docker-save manifest.json too),
`podman load`, skopeo (oci-archive:) and crane (--tarball) read.

    tools/make_oci_image.py --lint BIN --webhook BIN --repository REPO --tag TAG --out DIR

The layer: /usr/local/bin/gpuguard-webhook (the entrypoint), /usr/local/bin/gpuguard-lint
(for the docker pre-commit hook and CI jobs), the licence, an empty /tmp. No shell, no
package manager, no libraries: the binaries are static (cmake/static.cmake). The config runs
as 65532:65532 (numeric, so Kubernetes' runAsNonRoot can verify it), needs no writable path
(a read-only root filesystem works), and exposes 8443.

Deterministic: every timestamp is SOURCE_DATE_EPOCH (the commit's time in tools/release.sh),
entries are sorted, owners are 0:0 and gzip carries no name or time, so one commit gives one
image digest. Stdlib only.
"""
import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
USER = "65532:65532"
BIN_DIR = "usr/local/bin"


def tar_entry(tar, name, mtime, mode, data=None, kind=tarfile.REGTYPE):
    info = tarfile.TarInfo(name)
    info.mtime, info.mode, info.type = mtime, mode, kind
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if data is None:
        tar.addfile(info)
    else:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def make_layer(files, mtime):
    """files: {path in the image: (bytes, mode)}. Returns (tar bytes, gzip bytes)."""
    dirs = set()
    for path in files:
        parts = path.split("/")[:-1]
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in sorted(dirs | {"tmp"}):
            tar_entry(tar, d + "/", mtime, 0o1777 if d == "tmp" else 0o755, kind=tarfile.DIRTYPE)
        for path in sorted(files):
            data, mode = files[path]
            tar_entry(tar, path, mtime, mode, data)
    tar_bytes = raw.getvalue()
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", compresslevel=9, mtime=0, filename="") as f:
        f.write(tar_bytes)
    return tar_bytes, gz.getvalue()


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def image_blobs(args, created, mtime):
    """The layer, config and manifest blobs, and the manifest's descriptor."""
    files = {
        f"{BIN_DIR}/gpuguard-webhook": (open(args.webhook, "rb").read(), 0o755),
        f"{BIN_DIR}/gpuguard-lint": (open(args.lint, "rb").read(), 0o755),
        "usr/share/doc/gpuguard/copyright": (open(args.license, "rb").read(), 0o644),
    }
    tar_bytes, layer = make_layer(files, mtime)
    labels = {
        "org.opencontainers.image.title": "gpuguard-webhook",
        "org.opencontainers.image.description": "gpuguard's admission webhook and linter (static binaries, no shell)",
        "org.opencontainers.image.version": args.tag,
        "org.opencontainers.image.revision": args.revision,
        "org.opencontainers.image.source": args.source,
        "org.opencontainers.image.licenses": "Apache-2.0",
        "org.opencontainers.image.created": created,
    }
    config = {
        "architecture": args.arch, "os": "linux", "created": created,
        "config": {"User": USER, "Entrypoint": [f"/{BIN_DIR}/gpuguard-webhook"],
                   "Env": [f"PATH=/{BIN_DIR}"], "WorkingDir": "/",
                   "ExposedPorts": {"8443/tcp": {}}, "Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [digest(tar_bytes)]},
        "history": [{"created": created, "created_by": "tools/make_oci_image.py"}],
    }
    config_blob = canonical(config)
    manifest = {
        "schemaVersion": 2, "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "digest": digest(config_blob), "size": len(config_blob)},
        "layers": [{"mediaType": OCI_LAYER, "digest": digest(layer), "size": len(layer)}],
        "annotations": {k: v for k, v in labels.items() if k != "org.opencontainers.image.description"},
    }
    manifest_blob = canonical(manifest)
    descriptor = {"mediaType": OCI_MANIFEST, "digest": digest(manifest_blob), "size": len(manifest_blob),
                  "platform": {"architecture": args.arch, "os": "linux"},
                  "annotations": {"org.opencontainers.image.ref.name": args.tag,
                                  "io.containerd.image.name": f"{args.repository}:{args.tag}"}}
    blobs = [layer, config_blob, manifest_blob]
    return blobs, descriptor, digest(config_blob), digest(layer)


def write_layout(args):
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))

    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    blobs, descriptor, config_digest, layer_digest = image_blobs(args, created, epoch)
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [descriptor]}
    # docker load's format, beside the OCI one (as `docker save` writes since Docker 25).
    docker_manifest = [{"Config": "blobs/sha256/" + config_digest[7:],
                        "RepoTags": [f"{args.repository}:{args.tag}"],
                        "Layers": ["blobs/sha256/" + layer_digest[7:]]}]
    entries = {"oci-layout": canonical({"imageLayoutVersion": "1.0.0"}),
               "index.json": canonical(index), "manifest.json": canonical(docker_manifest)}
    for blob in blobs:
        entries["blobs/sha256/" + hashlib.sha256(blob).hexdigest()] = blob
    layout = os.path.join(args.out, "layout")
    for name, data in entries.items():
        path = os.path.join(layout, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    archive = os.path.join(args.out, args.archive)
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("blobs/", "blobs/sha256/"):
            tar_entry(tar, d, epoch, 0o755, kind=tarfile.DIRTYPE)
        for name in sorted(entries):
            tar_entry(tar, name, epoch, 0o644, entries[name])
    return layout, archive, descriptor["digest"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lint", required=True)
    parser.add_argument("--webhook", required=True)
    parser.add_argument("--license", required=True)
    parser.add_argument("--repository", required=True, help="e.g. ghcr.io/ORG/gpuguard-webhook")
    parser.add_argument("--tag", required=True)
    parser.add_argument("--arch", default="amd64", help="OCI architecture: amd64 or arm64")
    parser.add_argument("--revision", default="unknown", help="the commit")
    parser.add_argument("--source", default="", help="the repository's URL")
    parser.add_argument("--out", required=True, help="directory: layout/ and the archive go there")
    parser.add_argument("--archive", default="image.oci.tar", help="the archive's file name")
    args = parser.parse_args()
    for path in (args.lint, args.webhook):
        if not open(path, "rb").read(4) == b"\x7fELF":
            sys.exit(f"make_oci_image: {path} is not an ELF binary")
    layout, archive, manifest_digest = write_layout(args)
    print(json.dumps({"layout": layout, "archive": archive, "manifest": manifest_digest}))


if __name__ == "__main__":
    main()
