"""Build steps beyond pyproject.toml's metadata: the compiled kernels (docs/kernels.md).

``skimsketch._ckernels`` is one C file against the CPython API (no build dependency past a
C compiler). It is optional: without a compiler the package installs and runs on its numpy
reference kernels (``skimsketch.kernels.backend()`` says which is active). The source's
SHA-1 is compiled in, so a checkout whose C file changed after the build is noticed at
import (the stale module is not used).
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

KERNELS_C = "skimsketch/_ckernels.c"
source_sha = hashlib.sha1((Path(__file__).parent / KERNELS_C).read_bytes()).hexdigest()

setup(
    ext_modules=[
        Extension(
            "skimsketch._ckernels",
            sources=[KERNELS_C],
            define_macros=[("SKIMSKETCH_SOURCE_SHA", f'"{source_sha}"')],
            extra_compile_args=["-O3", "-std=c11"],
            optional=True,
        )
    ]
)
