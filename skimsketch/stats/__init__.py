"""Shared: what the families' estimates and intervals have in common.

* :mod:`.bounds`: confidence checks, normal and Chebyshev quantiles, medians of means;
* :mod:`.exact_store`: the exact entries a summary holds while they fit (exact mode, the sample's table).

Imports no family (``tests/test_architecture.py``); import the modules, this package exports nothing.
"""
