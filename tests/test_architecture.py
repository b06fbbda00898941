"""The import contract: what may import what (docs/architecture.md).

* the core (``skimsketch``) never imports ``spark_udaf``, ``pyspark``, ``data``,
  ``experiments`` or ``benchmarks``;
* sketch modules never import the streaming layer (``skimsketch.stream``);
* the house (issue 34): every module of ``skimsketch`` is in one room. The shared packages
  (``errors``, ``estimate``, ``exact``, ``keys``, ``kernels``, ``format``, ``stats``) import only
  shared packages. A family (``sketch``, ``sample``, ``heavy``, ``stream``) imports the shared
  packages and its own modules, never another family's modules, except that ``stream`` may
  import the ``skimsketch.sketch`` package itself (its public API), not a module inside it.
  The top level (``skimsketch/__init__.py``, ``skimsketch.cli``) may import everything and is
  imported by nothing inside;
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
        if _is_stream(name) or name == "skimsketch" or name.startswith("skimsketch.cli"):
            continue
        for target, _, line in _imports(name, path):
            dep = _resolve(target, modules)
            if dep and _is_stream(dep):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_installed_packages_are_the_library_only():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'include = ["skimsketch*", "spark_udaf*"]' in text


# -- privacy: private names stay in their module, private fields in their class ----------
SCANNED = ("skimsketch", "spark_udaf", "experiments", "benchmarks", "data")
OWN_PACKAGES = ("skimsketch", "spark_udaf", "experiments", "benchmarks", "data")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _all_modules() -> dict[str, Path]:
    out = {}
    for package in SCANNED:
        out.update(_modules(package))
    return out


def _imported_modules(name: str, path: Path, tree: ast.Module, modules: dict) -> dict:
    """{local name: module} for every package module the file binds to a name (``import a.b as m``,
    ``from . import fmt``)."""
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in modules:
                    bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(pkg, node)
            for a in node.names:
                full = f"{base}.{a.name}" if base else a.name
                if full in modules:
                    bound[a.asname or a.name] = full
    return bound


def _absolute(pkg: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = pkg.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def private_imports(name: str, path: Path, modules: dict, root: Path = ROOT) -> list[str]:
    """Private names (leading underscore, not dunder) that ``name`` takes from another package module:
    ``from m import _x``, ``import pkg._mod`` from outside ``pkg``, and ``m._x`` on an imported module."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bad = []

    def owner_package(mod: str) -> str:
        return mod.split(".")[0]

    def check_module_path(mod: str, line: int):
        # a private module (spark_udaf._common) is private to its own package
        parts = mod.split(".")
        for i, part in enumerate(parts):
            if _is_private(part) and not name.startswith(".".join(parts[:i]) + "."):
                bad.append(f"{path.relative_to(root)}:{line} imports the private module {mod}")
                return

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(pkg, node)
            if owner_package(base) not in OWN_PACKAGES:
                continue
            check_module_path(base, node.lineno)
            for a in node.names:
                full = f"{base}.{a.name}"
                if full in modules:
                    check_module_path(full, node.lineno)
                elif _is_private(a.name) and base != name:
                    bad.append(f"{path.relative_to(root)}:{node.lineno} imports {a.name} from {base}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if owner_package(a.name) in OWN_PACKAGES:
                    check_module_path(a.name, node.lineno)
    bound = _imported_modules(name, path, tree, modules)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            chain, v = [node.attr], node.value
            while isinstance(v, ast.Attribute):
                chain.append(v.attr)
                v = v.value
            if isinstance(v, ast.Name) and v.id in bound and bound[v.id] != name:
                mod = ".".join([bound[v.id]] + chain[::-1][:-1])
                if mod in modules or mod == bound[v.id]:
                    bad.append(f"{path.relative_to(root)}:{node.lineno} uses {node.attr} of {mod}")
    return bad


def test_no_module_imports_a_private_name_of_another():
    modules = _all_modules()
    bad = [b for name, path in modules.items() for b in private_imports(name, path, modules)]
    assert not bad, "private names used outside their module (make them public there, or move them):\n" + "\n".join(bad)


def _class_fields(modules: dict) -> dict[str, set]:
    """{class name: private fields it sets on ``self`` or lists in ``__slots__``, with its bases' fields}."""
    own, bases = {}, {}
    for path in modules.values():
        for cls in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(cls, ast.ClassDef):
                continue
            fields = own.setdefault(cls.name, set())
            bases.setdefault(cls.name, set()).update(b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                                                     for b in cls.bases)
            for node in ast.walk(cls):
                for t in _assigned(node):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        fields.add(t.attr)
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                        for t in node.targets):
                    fields.update(e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant)
                                  and isinstance(e.value, str))

    def with_bases(c, seen=()):
        out = set(own.get(c, ()))
        for b in bases.get(c, ()):
            if b not in seen:
                out |= with_bases(b, seen + (c,))
        return out

    return {c: with_bases(c) for c in own}


def _assigned(node) -> list:
    """Assignment targets of a statement, tuples unpacked; ``setattr(obj, "_x", v)`` as ``obj._x``."""
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
          and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
        return [ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Store())]
    else:
        return []
    out = []
    while targets:
        t = targets.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            targets.extend(t.elts)
        elif isinstance(t, ast.Starred):
            targets.append(t.value)
        else:
            out.append(t)
    return out


def private_field_writes(path: Path, fields: dict, root: Path = ROOT) -> list[str]:
    """``obj._x = ...`` (or ``setattr``/``del``) on an object other than ``self``/``cls``, unless the
    code sits in a class that owns ``_x`` (a method building or copying an instance of its own class)."""
    bad = []

    def visit(node, cls_fields):
        if isinstance(node, ast.ClassDef):
            cls_fields = fields.get(node.name, set())
        for t in _assigned(node):
            if (isinstance(t, ast.Attribute) and _is_private(t.attr)
                    and not (isinstance(t.value, ast.Name) and t.value.id in ("self", "cls"))
                    and t.attr not in cls_fields):
                bad.append(f"{path.relative_to(root)}:{node.lineno} sets {ast.unparse(t)}")
        for child in ast.iter_child_nodes(node):
            visit(child, cls_fields)

    visit(ast.parse(path.read_text(), str(path)), set())
    return bad


def test_no_code_sets_the_private_fields_of_another_class():
    modules = _all_modules()
    fields = _class_fields(modules)
    bad = [b for path in modules.values() for b in private_field_writes(path, fields)]
    assert not bad, "private fields set from outside their class (add a method to the class):\n" + "\n".join(bad)


def test_the_privacy_checks_catch_what_they_claim(tmp_path):
    """The two checks above on a small example: each flags exactly the bad lines."""
    pkg = tmp_path / "skimsketch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("_SECRET = 1\nPUBLIC = 2\n\n\ndef _helper():\n    return 1\n")
    (pkg / "b.py").write_text(
        "from . import a\nfrom .a import PUBLIC, _SECRET\n\nX = a._helper() + a.PUBLIC\n\n\n"
        "class Box:\n    def __init__(self):\n        self._v = 0\n\n"
        "    def copy(self):\n        out = Box()\n        out._v = self._v\n        return out\n\n\n"
        "def poke(box, other):\n    box._v = 3\n    other.x, box._v = 1, 2\n    setattr(box, '_v', 4)\n"
        "    box.v = 5\n")
    (pkg / "_c.py").write_text("Y = 1\n")
    (pkg / "d.py").write_text("from ._c import Y\n")  # a private module inside its own package: fine
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "e.py").write_text("from skimsketch._c import Y\nfrom skimsketch import a\n")
    modules = {"skimsketch": pkg / "__init__.py", "skimsketch.a": pkg / "a.py", "skimsketch.b": pkg / "b.py",
               "skimsketch._c": pkg / "_c.py", "skimsketch.d": pkg / "d.py", "benchmarks.e": tmp_path / "benchmarks" / "e.py"}
    imports = private_imports("skimsketch.b", pkg / "b.py", modules, tmp_path)
    writes = private_field_writes(pkg / "b.py", _class_fields(modules), tmp_path)
    assert private_imports("skimsketch.d", pkg / "d.py", modules, tmp_path) == []
    assert private_imports("benchmarks.e", tmp_path / "benchmarks" / "e.py", modules, tmp_path) == [
        "benchmarks/e.py:1 imports the private module skimsketch._c"]
    assert imports == ["skimsketch/b.py:2 imports _SECRET from skimsketch.a", "skimsketch/b.py:4 uses _helper of skimsketch.a"]
    assert writes == ["skimsketch/b.py:18 sets box._v", "skimsketch/b.py:19 sets box._v", "skimsketch/b.py:20 sets box._v"]


# -- the house: shared packages and families (docs/architecture.md, issue 34) --------------
# Every module of skimsketch belongs to one room. A shared module imports only shared modules. A family
# module imports its own family and the shared modules, never another family's modules; the one
# exception: the stream family may import the sketch family's public package (``from ..sketch import
# Sketch``, the names skimsketch/sketch/__init__.py exports), never a module inside it. The top-level
# package (skimsketch/__init__.py) and the command line (skimsketch.cli) may import everything.
SHARED = ("skimsketch.errors", "skimsketch.estimate", "skimsketch.exact", "skimsketch.keys",
          "skimsketch.kernels", "skimsketch.format", "skimsketch.stats")
FAMILIES = ("skimsketch.sketch", "skimsketch.sample", "skimsketch.heavy", "skimsketch.stream")
TOP = ("skimsketch", "skimsketch.cli")
PUBLIC_PACKAGES = {"skimsketch.stream": ("skimsketch.sketch",)}  # family -> family packages it may import


def _within(name: str, prefixes) -> str | None:
    """The prefix (room) ``name`` lies in, or None."""
    for p in prefixes:
        if name == p or name.startswith(p + "."):
            return p
    return None


def room(name: str) -> str:
    """``shared``, ``top`` or the family's package of a skimsketch module; ValueError for a module in no room."""
    if _within(name, SHARED):
        return "shared"
    family = _within(name, FAMILIES)
    if family:
        return family
    if name == "skimsketch" or _within(name, ("skimsketch.cli",)):
        return "top"
    raise ValueError(f"{name} is in no room of the house: put it in a shared package or a family "
                     "(tests/test_architecture.py, SHARED and FAMILIES)")


def house_violations(modules: dict, root: Path = ROOT) -> list[str]:
    """The imports that break the house rules above, one line each."""
    bad = []
    for name, path in modules.items():
        mine = room(name)
        if mine == "top":
            continue
        for target, _, line in _imports(name, path):
            dep = _resolve(target, modules)
            if dep is None or dep == name:
                continue
            theirs = room(dep)
            where = f"{path.relative_to(root)}:{line} imports {target}"
            if theirs == "top":
                bad.append(f"{where}: the top level (skimsketch, skimsketch.cli) is imported by nobody inside")
            elif mine == "shared" and theirs != "shared":
                bad.append(f"{where}: a shared package imports no family")
            elif mine not in ("shared", theirs) and theirs != "shared":
                if not (dep in PUBLIC_PACKAGES.get(mine, ()) and dep == theirs):
                    bad.append(f"{where}: a family imports the shared packages and its own modules only"
                               + (f" (and the public package {theirs}, not its modules)"
                                  if theirs in PUBLIC_PACKAGES.get(mine, ()) else ""))
    return bad


def test_every_module_has_a_room_in_the_house():
    for name in _modules("skimsketch"):
        room(name)


def test_families_import_only_shared_packages_and_themselves():
    bad = house_violations(_modules("skimsketch"))
    assert not bad, "house rules broken (docs/architecture.md):\n" + "\n".join(bad)


def test_the_house_rules_catch_what_they_claim(tmp_path):
    """The rule check on a small house: each bad import is flagged, each allowed one is not."""
    files = {
        "skimsketch/__init__.py": "from .sample.a import A\n",
        "skimsketch/errors.py": "",
        "skimsketch/keys/__init__.py": "",
        "skimsketch/keys/k.py": "from ..sketch.base import B\n",  # shared -> family: bad
        "skimsketch/sketch/__init__.py": "from .base import B\n",
        "skimsketch/sketch/base.py": "from ..errors import E\nfrom ..keys import k\n",  # shared: fine
        "skimsketch/sample/__init__.py": "",
        "skimsketch/sample/a.py": "from ..sketch.base import B\nfrom ..sketch import B\n",  # both bad
        "skimsketch/stream/__init__.py": "",
        "skimsketch/stream/w.py": "from ..sketch import B\nfrom ..sketch.base import B\n",  # fine, bad
        "skimsketch/stats/__init__.py": "from .. import errors\nfrom ..cli import main\n",  # fine, bad (top)
        "skimsketch/cli/__init__.py": "from ..sample.a import A\n",  # top: anything
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    modules = {}
    for rel in files:
        parts = Path(rel).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = tmp_path / rel
    flagged = [b.split(": ")[0] for b in house_violations(modules, tmp_path)]
    assert sorted(flagged) == sorted([
        "skimsketch/keys/k.py:1 imports skimsketch.sketch.base",
        "skimsketch/sample/a.py:1 imports skimsketch.sketch.base",
        "skimsketch/sample/a.py:2 imports skimsketch.sketch",
        "skimsketch/stream/w.py:2 imports skimsketch.sketch.base",
        "skimsketch/stats/__init__.py:2 imports skimsketch.cli",
    ])
    with pytest.raises(ValueError, match="no room"):
        room("skimsketch.loose")
