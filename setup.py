"""Build steps beyond pyproject.toml's metadata.

* The compiled kernels (docs/kernels.md): ``skimsketch.kernels._ckernels`` is one C file against the
  CPython API (no build dependency past a C compiler). It is optional: without a compiler the
  package installs and runs on its numpy reference kernels (``skimsketch.kernels.backend()``
  says which is active). The source's SHA-1 is compiled in, so a checkout whose C file changed
  after the build is noticed at import (the stale module is not used).
* The native Spark SQL functions' jar (docs/native.md): ``build_py`` compiles it into a wheel
  (``build_backend.BuildPyWithJar``; editable installs skip it).
"""

import hashlib
import sys
from pathlib import Path

from setuptools import Extension, setup

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_backend import BuildPyWithJar  # noqa: E402  (the project root, put on the path just above)

KERNELS_C = "skimsketch/kernels/_ckernels.c"
source_sha = hashlib.sha1((Path(__file__).parent / KERNELS_C).read_bytes()).hexdigest()

setup(
    ext_modules=[
        Extension(
            "skimsketch.kernels._ckernels",
            sources=[KERNELS_C],
            define_macros=[("SKIMSKETCH_SOURCE_SHA", f'"{source_sha}"')],
            extra_compile_args=["-O3", "-std=c11"],
            optional=True,
        )
    ],
    cmdclass={"build_py": BuildPyWithJar},
)
