"""Experiments: the paper's Figure 5 and Census study, beside other sketches.

Run ``python -m experiments [--quick | --full]`` (see ``experiments/README.md``).

* :mod:`experiments.workloads` — quick / full configurations and the workloads;
* :mod:`experiments.metrics` — the paper's error metric and memory levels;
* :mod:`experiments.runner` — builds every sketch and collects the estimates;
* :mod:`experiments.countmin` — DataSketches Count-Min as a join estimator;
* :mod:`experiments.report` — plots and the claims-versus-measurements report.

The experiments import the library; the library never imports them.
"""
