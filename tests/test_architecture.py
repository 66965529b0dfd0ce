"""docs/architecture.md against the code: every module is on the page, and its rules hold.

The imports are read from the source (``ast``), not by importing anything: an
import under ``if TYPE_CHECKING:`` is a type in an annotation and does not
count; one inside a function does (it is an import all the same, only later).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_reb"
PAGE = ROOT / "docs" / "architecture.md"
VOCABULARY = {"spec", "variants", "outcome", "selfreport", "sizes", ""}
#: The page's layering table: package -> the packages it may import besides the vocabulary.
ALL = {"witness", "targets", "evidence", "rules", "assets", "runs", "report", "pyramid",
       "plugin", "loop"}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(name: str) -> str | None:
    """The module of ours an imported name lives in (a package, or a name in one)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(path: Path) -> tuple[set[str], set[str]]:
    """(modules of ours imported, other top-level packages imported), TYPE_CHECKING aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
            and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    ours: set[str] = set()
    others: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("pytest_reb"):
                found = resolve(name)
                if found:
                    ours.add(found)
            else:
                others.add(name.split(".")[0])
    return ours, others


GRAPH = {name: imports(path) for name, path in MODULES.items()}


def group(module: str) -> str:
    """The package a module belongs to ("" for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def allowed() -> dict[str, set[str]]:
    """The page's layering table, read from the page."""
    table = PAGE.read_text(encoding="utf-8").split("## Layering rules", 1)[1]
    rules: dict[str, set[str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        package = cells[0].strip("`/")
        words = set(re.findall(r"`(\w+)/`", cells[1]))
        if cells[1].startswith("everything but"):
            words = ALL - words - {package}
        rules[package] = words
    return rules


def test_the_page_lists_every_module_and_only_those() -> None:
    page = PAGE.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([\w/]+\.py)` \|", page, re.MULTILINE))
    actual = {str(p.relative_to(PACKAGE)) for p in MODULES.values()
              if p.name != "__init__.py" or p.parent in (PACKAGE, PACKAGE / "targets",
                                                         PACKAGE / "witness")}
    assert actual - listed == set(), "modules the page does not list"
    assert listed - actual == set(), "modules the page lists that do not exist"


def test_the_layering_table_covers_every_package() -> None:
    assert set(allowed()) == ALL


@pytest.mark.parametrize("package", sorted(ALL))
def test_each_package_imports_only_what_the_page_allows(package: str) -> None:
    may = allowed()[package] | {package} | VOCABULARY
    broken = sorted(f"{m} -> {t}" for m, (ours, _) in GRAPH.items() if group(m) == package
                    for t in ours if group(t) not in may)
    assert broken == []


def test_the_vocabulary_imports_only_the_vocabulary() -> None:
    broken = sorted(f"{m} -> {t}" for m, (ours, _) in GRAPH.items()
                    if group(m) in VOCABULARY for t in ours if group(t) not in VOCABULARY)
    assert broken == []


def test_only_the_plugin_imports_pytest() -> None:
    importers = {m for m, (_, others) in GRAPH.items() if others & {"pytest", "_pytest"}}
    assert importers and all(group(m) == "plugin" for m in importers), sorted(importers)


def test_no_import_circle() -> None:
    """Depth-first search over every import, those inside functions included."""
    edges = {m: {t for t in ours if t != m} for m, (ours, _) in GRAPH.items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                return [*path[path.index(t):], t]
            if t not in state and (found := visit(t)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(edges):
        if m not in state:
            assert (circle := visit(m)) is None, " -> ".join(circle or [])


def test_no_concrete_target_is_named_outside_targets() -> None:
    """What differs between kinds of target is a method of ``Target``: nothing outside
    ``targets/`` asks which kind it holds."""
    concrete = re.compile(r"isinstance\([^)]*\b(DockerTarget|LocalTarget|TestinfraTarget)\b")
    found = [str(p.relative_to(ROOT)) for m, p in MODULES.items()
             if group(m) != "targets" and concrete.search(p.read_text(encoding="utf-8"))]
    assert found == []
