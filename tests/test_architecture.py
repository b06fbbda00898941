"""The import contract: what may import what (docs/architecture.md).

* the core (``skimsketch``) never imports ``spark_udaf``, ``pyspark``, ``data``,
  ``experiments`` or ``benchmarks``;
* sketch modules never import the streaming layer (``skimsketch.stream``);
* imports inside a package are at module top (no hidden function-level
  imports) and form no cycle. Optional third-party packages (pandas, pyarrow)
  may be imported lazily.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = ("spark_udaf", "pyspark", "data", "experiments", "benchmarks")


def _modules(package: str) -> dict[str, Path]:
    base = ROOT / package
    out = {}
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path):
    """(imported module, is at module top, line) for every import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, id(node) in top, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            targets = [mod] if node.module else [f"{mod}.{a.name}" for a in node.names]
            for t in targets:
                yield t, id(node) in top, node.lineno


def _resolve(target: str, modules: dict) -> str | None:
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def _is_stream(name: str) -> bool:
    return name == "skimsketch.stream" or name.startswith("skimsketch.stream.")


@pytest.mark.parametrize("package", ["skimsketch", "spark_udaf"])
def test_internal_imports_are_at_module_top_and_acyclic(package):
    modules = _modules(package)
    graph, hidden = {}, []
    for name, path in modules.items():
        deps = set()
        for target, at_top, line in _imports(name, path):
            dep = _resolve(target, modules)
            if dep is None or dep == name:
                continue
            if not at_top:
                hidden.append(f"{path.relative_to(ROOT)}:{line} imports {target} inside a function")
            deps.add(dep)
        graph[name] = deps
    assert not hidden, "\n".join(hidden)
    # a package's __init__ re-exports its modules: edges *into* it from its own modules are cycles too
    state, cycles = {}, []

    def visit(n, stack):
        state[n] = 1
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                visit(d, stack + [d])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_core_never_imports_integrations_or_repository_folders():
    bad = []
    for name, path in _modules("skimsketch").items():
        for target, _, line in _imports(name, path):
            if target.split(".")[0] in FORBIDDEN_IN_CORE:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_sketches_never_import_the_streaming_layer():
    modules = _modules("skimsketch")
    bad = []
    for name, path in modules.items():
        if _is_stream(name) or name in ("skimsketch", "skimsketch.cli"):
            continue
        for target, _, line in _imports(name, path):
            dep = _resolve(target, modules)
            if dep and _is_stream(dep):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_installed_packages_are_the_library_only():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'include = ["skimsketch*", "spark_udaf*"]' in text
