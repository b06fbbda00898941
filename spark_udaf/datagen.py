"""Deterministic Zipf tables generated on the executors (for the demo job, benchmark and tests).

Row ``i`` of a table gets key ``(r - 1 + shift) mod domain`` where rank ``r``
in ``[1, domain]`` is drawn with probability ``∝ r^-z`` by inverting the CDF at
``u_i = splitmix64(seed·2^32 + i) / 2^64``. The key of a row depends only on
``(i, seed, z, domain, shift)``, never on the partitioning, so a table is the
same on every run, machine and cluster (docs/algorithms.md: the paper's Zipf streams, G
being F right-shifted by ``shift``). :func:`zipf_table` computes the keys on the executors
(Python tasks: :func:`spark_udaf.cluster.require_python`); :func:`write_zipf_parquet` writes
the same table from the driver, for executors that cannot run the library's Python.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from .cluster import require_python

__all__ = ["write_zipf_parquet", "zipf_keys", "zipf_table"]

_G = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@lru_cache(maxsize=8)
def _cdf(z: float, domain: int) -> np.ndarray:
    w = np.arange(1, domain + 1, dtype=np.float64) ** -float(z)
    c = np.cumsum(w)
    return c / c[-1]


def zipf_keys(ids: np.ndarray, z: float, domain: int, shift: int = 0, seed: int = 0) -> np.ndarray:
    """Keys (int64) of rows ``ids`` of the table ``(z, domain, shift, seed)``."""
    if domain < 1:
        raise ValueError(f"domain must be >= 1, got {domain}")
    if z < 0:
        raise ValueError(f"zipf skew z must be >= 0, got {z}")
    with np.errstate(over="ignore"):
        x = np.asarray(ids, dtype=np.int64).astype(np.uint64) + np.uint64((seed & 0xFFFFFFFF) << 32)
        x = x * _G + _G
        x ^= x >> np.uint64(30)
        x *= _M1
        x ^= x >> np.uint64(27)
        x *= _M2
        x ^= x >> np.uint64(31)
    u = (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    rank0 = np.searchsorted(_cdf(z, domain), u, side="right")
    rank0 = np.minimum(rank0, domain - 1)
    return ((rank0 + int(shift)) % domain).astype(np.int64)


def zipf_table(spark, rows: int, z: float, domain: int, shift: int = 0, seed: int = 0,
               partitions: int | None = None, column: str = "k"):
    """DataFrame of ``rows`` rows with one bigint column of Zipf keys, built on the executors."""
    from pyspark.sql.types import LongType, StructField, StructType

    zipf_keys(np.zeros(1, dtype=np.int64), z, domain, shift, seed)  # validate arguments on the driver
    require_python(spark, "generating a Zipf table on the executors")

    def gen(batches):
        import pyarrow as pa

        for b in batches:
            ids = b.column(0).to_numpy(zero_copy_only=False)
            yield pa.RecordBatch.from_arrays([pa.array(zipf_keys(ids, z, domain, shift, seed))], names=[column])

    ids = spark.range(0, rows, 1, partitions) if partitions else spark.range(0, rows)
    return ids.mapInArrow(gen, StructType([StructField(column, LongType(), False)]))


def write_zipf_parquet(path: str, rows: int, z: float, domain: int, shift: int = 0, seed: int = 0,
                       files: int = 1, column: str = "k", chunk_rows: int = 1 << 20) -> str:
    """Write the table :func:`zipf_table` generates (the same keys, row for row) as ``files`` Parquet files
    under the directory ``path`` (a local path or a URI pyarrow's filesystems write), from the driver -> ``path``."""
    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    zipf_keys(np.zeros(1, dtype=np.int64), z, domain, shift, seed)
    files = max(1, min(int(files), rows or 1))
    fs, root = pafs.FileSystem.from_uri(path if "://" in path else "file://" + os.path.abspath(path))
    fs.create_dir(root, recursive=True)
    schema = pa.schema([pa.field(column, pa.int64(), nullable=False)])
    bounds = np.linspace(0, rows, files + 1).astype(np.int64)
    for i in range(files):
        with pq.ParquetWriter(f"{root}/part-{i:05d}.parquet", schema, filesystem=fs) as w:
            for lo in range(int(bounds[i]), int(bounds[i + 1]), chunk_rows):
                ids = np.arange(lo, min(lo + chunk_rows, int(bounds[i + 1])), dtype=np.int64)
                w.write_table(pa.table([pa.array(zipf_keys(ids, z, domain, shift, seed))], schema=schema))
    return path
