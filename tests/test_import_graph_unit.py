"""No import circles in rig/: every import statement counts, at module level, inside a
function or under ``if TYPE_CHECKING:`` (a function-local import hides a circle, it does not
break it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]


def _modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root/rig`` (a package is its
    ``__init__.py``)."""
    mods = {}
    for path in (root / "rig").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    """The module ``name`` lives in: itself, or its nearest enclosing module."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node: ast.AST, package: str, mods: dict[str, Path]) -> list[str]:
    """The names an import statement loads: ``import a.b`` loads ``a.b``; ``from m import x``
    loads ``m.x`` when that is a module, else ``m``."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    return [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the rig modules it imports anywhere in its source."""
    mods = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        package = m if path.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in _imported(node, package, mods):
                target = _resolve(name, mods) if name.startswith("rig") else None
                if target and target != m:
                    graph[m].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _describe(comps: list[list[str]], graph: dict[str, set[str]]) -> str:
    lines = []
    for comp in comps:
        members = set(comp)
        lines.append(f"{len(comp)} modules: {comp}")
        lines += [f"  {v} -> {sorted(graph[v] & members)}" for v in comp]
    return "\n".join(lines)


def test_rig_has_no_import_circles():
    graph = import_graph()
    comps = circles(graph)
    assert not comps, "import circles in rig/ (function-local imports count):\n" + _describe(
        comps, graph)


def test_the_check_finds_a_circle_through_a_function_local_import(tmp_path):
    pkg = tmp_path / "rig"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from rig.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from rig import a\n    return a\n")
    (pkg / "c.py").write_text("import rig.a\n")
    graph = import_graph(tmp_path)
    assert graph["rig.b"] == {"rig.a"} and graph["rig.c"] == {"rig.a"}
    assert circles(graph) == [["rig.a", "rig.b"]]
