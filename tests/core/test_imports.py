"""Import hygiene of the sketch core: imports at module top, no cycles."""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "skimsketch"
CORE = ["base", "serde", "format", "kinds", "state", "kernels", "agms", "hash_sketch", "skimmed", "hierarchy",
        "hierarchy_shape", "multiway", "aggregates", "sizing", "bounds", "hashing", "keys", "estimate", "errors"]


def _imports(name):
    tree = ast.parse((PKG / f"{name}.py").read_text())
    top, nested = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            mods = [node.module] if node.module else [a.name for a in node.names]
            if node in tree.body:
                top.update(mods)
            else:
                nested.extend(mods)
    return top, nested


@pytest.mark.parametrize("name", CORE)
def test_no_function_level_imports_of_the_package(name):
    _, nested = _imports(name)
    assert nested == [], f"{name}.py imports {nested} inside a function"


def test_core_import_graph_is_acyclic():
    graph = {n: {m for m in _imports(n)[0] if m in CORE} for n in CORE}
    state = {}

    def visit(n, path):
        if state.get(n) == "done":
            return
        assert state.get(n) != "open", "import cycle: " + " -> ".join(path + [n])
        state[n] = "open"
        for m in sorted(graph[n]):
            visit(m, path + [n])
        state[n] = "done"

    for n in CORE:
        visit(n, [])
