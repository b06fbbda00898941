"""skimsketch on Spark: distributed sketch building, SQL functions, exact joins.

```python
import skimsketch as ss, spark_udaf
a = spark_udaf.sketch_column(orders, "customer_id", ss.HashSketch(width=2048, depth=7, seed=1))
est = spark_udaf.estimate_join_size(orders, "customer_id", visits, "customer_id", tolerance=0.1)
exact = spark_udaf.exact_join_size(orders, "customer_id", visits, "customer_id")
spark = spark_udaf.configure(SparkSession.builder).getOrCreate()   # the native SQL functions' jar
spark_udaf.register(spark)   # skim_sketch_agg, skim_union_agg, skim_join_size, ... in Spark SQL
print(spark_udaf.describe("skim_join_size"))   # what DESCRIBE FUNCTION EXTENDED shows
```

``spark_udaf.functions`` has Column helpers for the same functions.

Sketches are built per partition on the executors (``mapInArrow``) and only
their bytes are merged: rows never reach the driver and are never shuffled.
The core package never imports pyspark; this package needs pyspark, pyarrow
and pandas (the ``spark`` extra). See docs/spark.md.
"""

from .build import merge_sketch_column, sketch_by, sketch_column, sketch_pair, sketch_parquet, sketch_partials
from .cluster import ExecutorPythonError, ship_package
from .estimate import estimate_join_size, relative_half_width
from .exact import exact_join_size, exact_self_join_size, frequencies
from . import functions
from .native import configure
from .sql import ALIASES, FUNCTIONS, describe, register
from .streaming import StreamingSketch, read_state

__all__ = [
    "sketch_column",
    "sketch_pair",
    "sketch_parquet",
    "sketch_partials",
    "sketch_by",
    "merge_sketch_column",
    "estimate_join_size",
    "relative_half_width",
    "exact_join_size",
    "exact_self_join_size",
    "frequencies",
    "configure",
    "register",
    "describe",
    "functions",
    "FUNCTIONS",
    "ALIASES",
    "ship_package",
    "ExecutorPythonError",
    "StreamingSketch",
    "read_state",
]
