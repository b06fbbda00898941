"""Factories shared by the core tests: one entry per sketch class."""

import numpy as np

import skimsketch as ss

DOMAIN = 1 << 12

FACTORIES = {
    "agms": lambda width=16, depth=3, seed=5, **kw: ss.AGMSSketch(width, depth, seed, **kw),
    "hash": lambda width=64, depth=5, seed=5, **kw: ss.HashSketch(width, depth, seed, **kw),
    "skimmed": lambda width=64, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, domain=DOMAIN, **kw),
}
KINDS = sorted(FACTORIES)


def keys(n=2000, seed=0, m=DOMAIN):
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) - 1) % m
