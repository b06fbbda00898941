"""Build steps beyond pyproject.toml's metadata.

* The compiled kernels (docs/kernels.md): ``skimsketch.kernels._ckernels`` is one extension module built
  from the C files of skimsketch/kernels (one job each, a shared header) against the CPython API (no build
  dependency past a C compiler). It is optional: without a compiler the package installs and runs on its
  numpy reference kernels (``skimsketch.kernels.backend()`` says which is active). The sources' SHA-1
  (``skimsketch.kernels.compiled.source_sha``, recomputed here) is compiled in, so a checkout whose C
  files changed after the build is noticed at import (the stale module is not used).
* The native Spark SQL functions' jar (docs/native.md): ``build_py`` compiles it into a wheel
  (``build_backend.BuildPyWithJar``; editable installs skip it).
"""

import hashlib
import sys
from pathlib import Path

from setuptools import Extension, setup

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_backend import BuildPyWithJar  # noqa: E402  (the project root, put on the path just above)

ROOT = Path(__file__).resolve().parent
KERNELS = "skimsketch/kernels"  # relative to ROOT, as setuptools wants its sources
KERNELS_C = sorted(f"{KERNELS}/{p.name}" for p in (ROOT / KERNELS).glob("*.c"))  # _ckernels.c: the method table
KERNELS_H = sorted(f"{KERNELS}/{p.name}" for p in (ROOT / KERNELS).glob("*.h"))


def source_sha(paths) -> str:
    """SHA-1 over the kernels' sources in name order (each file's name, a NUL, its bytes, a NUL): the same
    digest as skimsketch.kernels.compiled.source_sha, which cannot be imported here (no numpy at build time)."""
    h = hashlib.sha1()
    for path in sorted((ROOT / p for p in paths), key=lambda p: p.name):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


setup(
    ext_modules=[
        Extension(
            "skimsketch.kernels._ckernels",
            sources=KERNELS_C,
            depends=KERNELS_H,
            define_macros=[("SKIMSKETCH_SOURCE_SHA", f'"{source_sha(KERNELS_C + KERNELS_H)}"')],
            extra_compile_args=["-O3", "-std=c11"],
            optional=True,
        )
    ],
    cmdclass={"build_py": BuildPyWithJar},
)
