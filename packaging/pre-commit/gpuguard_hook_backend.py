"""PEP 517 backend for the repository root (pyproject.toml): builds gpuguard-pre-commit, a
wheel with no code whose metadata requires gpuguard-lint==VERSION, VERSION being
project(gpuguard VERSION ...) of CMakeLists.txt. pre-commit's `pip install .` then fetches
the gpuguard-lint wheel (PyPI, or PIP_FIND_LINKS) and its binary lands on the hook's PATH.
Stdlib only, so pip's isolated build environment needs nothing from an index."""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

NAME = "gpuguard_pre_commit"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _version() -> str:
    text = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    return re.search(r"project\(gpuguard VERSION ([0-9.]+)", text).group(1)


def _metadata() -> str:
    version = _version()
    return ("Metadata-Version: 2.1\nName: gpuguard-pre-commit\n"
            f"Version: {version}\n"
            "Summary: pre-commit hooks of gpuguard: installs the gpuguard-lint wheel\n"
            "License: Apache-2.0\n"
            f"Requires-Dist: gpuguard-lint=={version}\n")


def _dist_info() -> dict:
    info = f"{NAME}-{_version()}.dist-info"
    return {f"{info}/METADATA": _metadata().encode(),
            f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: gpuguard_hook_backend\n"
                             b"Root-Is-Purelib: true\nTag: py3-none-any\n"}


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    for name, data in _dist_info().items():
        path = os.path.join(metadata_directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return f"{NAME}-{_version()}.dist-info"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _dist_info()
    info = f"{NAME}-{_version()}.dist-info"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode()
    basename = f"{NAME}-{_version()}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, basename), "w") as whl:
        for name, data in files.items():
            whl.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return basename


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{_version()}"
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for rel in ("pyproject.toml", "CMakeLists.txt", "LICENSE",
                    "packaging/pre-commit/gpuguard_hook_backend.py"):
            tar.add(os.path.join(ROOT, rel), arcname=f"{base}/{rel}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return base + ".tar.gz"
