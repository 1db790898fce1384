"""The package's layers: imports point one way, from the command line down to the source.

Every import of every module under ``autosig/`` is read with ``ast``: at module level,
inside functions (the lazy ones kept for TensorFlow and start-up) and under
``TYPE_CHECKING``, since each is a dependency all the same. Then (a) no modules import
each other in a loop, (b) no packages do, and (c) a package imports only packages below
it in ``LAYERS``, the order ``docs/design.md`` gives. A new package (or a new top-level
module) must be placed in that order before this passes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS: tuple[str, ...] = (
    "errors",  # AutosigError and the exit codes
    "text",  # wording helpers (plural)
    "progress",  # the progress bar on stderr
    "pool",  # the one worker pool of check and fix
    "source",  # files, tf.function sites, findings, codes, config, suppressions
    "analysis",  # facts about source code that rules and inference both read
    "rules",  # the static rules (never a profile, never inference)
    "profile",  # recording calls; the profile file
    "infer",  # profile + analysis facts -> the plan
    "rewrite",  # the one fix loop, signature edits, the plan fix applies, diffs
    "explain",  # why each function retraced and what fix will do
    "verify",  # original vs rewritten, side by side
    "autosig",  # the package root: __version__ and record()
    "report",  # findings and verify reports as text, json, sarif, github
    "cli",  # the click group and one module per command
    "pytest_plugin",  # pytest: --autosig-profile and the retrace budget
    "__main__",  # python -m autosig
)
"""Packages (and top-level modules) from the bottom up: each imports only earlier ones."""

Graph = Mapping[str, set[str]]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(root: Path, package: str = "autosig") -> dict[str, set[str]]:
    """Each module of ``package`` under ``root`` -> the modules of the package it imports."""
    files = sorted((root / package).rglob("*.py"))
    modules = {module_name(path, root): path for path in files}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.add(submodule if submodule in modules else base)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def package_of(module: str) -> str:
    """``autosig.rules.base`` -> ``rules``; a top-level module is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(graph: Graph) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {package_of(m): set() for m in graph}
    for module, targets in graph.items():
        out[package_of(module)].update(package_of(t) for t in targets)
    for package, targets in out.items():
        targets.discard(package)
    return out


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def upward_imports(graph: Graph, layers: Iterable[str]) -> list[str]:
    """Imports of a package from one at its level or above (``a.b -> c.d``), and packages
    that have no place in ``layers``."""
    rank = {name: position for position, name in enumerate(layers)}
    problems = [f"{p}: not in LAYERS" for p in sorted(package_graph(graph)) if p not in rank]
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            source, dest = package_of(module), package_of(target)
            if source != dest and source in rank and dest in rank and rank[dest] >= rank[source]:
                problems.append(f"{module} -> {target} ({source} is not above {dest})")
    return problems


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return imports_of(ROOT)


def test_no_module_imports_itself_back(graph: Graph) -> None:
    assert cycles(graph) == []


def test_no_package_imports_itself_back(graph: Graph) -> None:
    assert cycles(package_graph(graph)) == []


def test_packages_import_only_lower_layers(graph: Graph) -> None:
    assert upward_imports(graph, LAYERS) == []


def test_every_layer_exists(graph: Graph) -> None:
    """LAYERS names the tree as it is: a renamed or removed package is noticed."""
    assert sorted(package_graph(graph)) == sorted(LAYERS)


def test_the_design_doc_gives_the_same_order() -> None:
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    line = next(x for x in design.splitlines() if x.startswith("Layers, bottom up:"))
    named = [word.strip(" `.") for word in line.removeprefix("Layers, bottom up:").split("<")]
    assert named == list(LAYERS)


def test_the_checks_find_loops_and_upward_imports(tmp_path: Path) -> None:
    """On a small package with one loop and one import from a lower layer upwards."""
    package = tmp_path / "pkg"
    for folder in ("low", "high"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("from pkg.low import b\n")
    (package / "low" / "b.py").write_text(
        "def f():\n    from . import a\n    from pkg.high.c import g\n"
    )
    (package / "high" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import low\n"
        "def g():\n    pass\n"
    )
    found = imports_of(tmp_path, "pkg")
    assert found["pkg.low.b"] == {"pkg.low.a", "pkg.high.c"}
    assert found["pkg.high.c"] == {"pkg.low"}
    assert cycles(found) == [["pkg.low.a", "pkg.low.b"]]
    assert cycles(package_graph(found)) == [["high", "low"]]
    assert upward_imports(found, ("pkg", "low", "high")) == [
        "pkg.low.b -> pkg.high.c (low is not above high)"
    ]
    assert upward_imports(found, ("low",)) == ["high: not in LAYERS", "pkg: not in LAYERS"]


@pytest.mark.parametrize("doc", ["README.md", "docs/design.md"])
def test_the_layout_tables_match_the_tree(doc: str) -> None:
    """Each package of ``autosig/`` has a row, and every path a row names exists."""
    rows = [
        line
        for line in (ROOT / doc).read_text(encoding="utf-8").splitlines()
        if line.startswith("| `autosig/")
    ]
    packages = sorted(p.name for p in (ROOT / "autosig").iterdir() if (p / "__init__.py").is_file())
    for package in packages:
        assert any(row.startswith(f"| `autosig/{package}/`") for row in rows), package
    for row in rows:
        first = row.split("|")[1]
        named = [part for part in first.split("`") if part.startswith("autosig/")]
        folder = (ROOT / named[0]).parent  # bare names are its siblings
        for part in first.split("`")[1::2]:
            where = ROOT / part if part.startswith("autosig/") else folder / part
            assert where.exists(), f"{doc}: {part}"


# -- the stages by concept (issue 23) ---------------------------------------------------


RULE_MODULE = re.compile(r"autosig\.rules\.(as\d{3})(?:_\w+)?(?:\.|$)")
"""A rule's own module (``rules/as101_print.py``) or package (``rules/as106/``)."""


def rule_code(module: str) -> str | None:
    """``autosig.rules.as106.sites`` -> ``as106``; None for a module that is no rule's."""
    found = RULE_MODULE.match(module)
    return found.group(1) if found else None


def test_rules_never_import_inference_or_a_profile(graph: Graph) -> None:
    """The static half (analysis, rules) reads source code only: ``check`` and static
    ``fix`` never load inference or the profile machinery."""
    wrong = [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        if package_of(module) in ("analysis", "rules")
        for target in sorted(targets)
        if package_of(target) in ("infer", "profile")
    ]
    assert wrong == []


def test_no_rule_imports_another_rule(graph: Graph) -> None:
    """What rules share is a fact of the rule context (``rules/context.py``), not an
    import of one rule by another."""
    wrong = [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if rule_code(module) and rule_code(target) and rule_code(module) != rule_code(target)
    ]
    assert wrong == []


def test_inference_does_not_import_the_rules(graph: Graph) -> None:
    """Inference turns a profile and analysis facts into the plan; rules are the static
    findings, which meet the plan only in the fix engine."""
    wrong = [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        if package_of(module) == "infer"
        for target in sorted(targets)
        if package_of(target) == "rules"
    ]
    assert wrong == []


PLAN_PARTS = frozenset(
    {"FunctionPlan", "ParamPlan", "CallSitePlan", "TensorizedParam", "BuildFirst", "Blocker"}
    | {"ShapeRewrite"}
)
"""The classes of ``infer/plan.py`` a decision is made of (``Plan`` itself, a list of
entries, may be filtered anywhere)."""

ENTRY_FIELDS = frozenset({"action", "params", "safety", "call_sites", "build_first"})


def plan_decisions(path: Path, root: Path = ROOT) -> list[str]:
    """Where a module makes part of a plan: builds one of ``PLAN_PARTS`` or replaces a
    plan entry's decision (``replace(entry, action=...)``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name in PLAN_PARTS or (
            name == "replace" and any(k.arg in ENTRY_FIELDS for k in node.keywords)
        ):
            found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def test_only_inference_builds_a_plan() -> None:
    """The plan fix, explain and verify share is decided in ``infer/`` and nowhere else."""
    wrong = []
    for path in sorted((ROOT / "autosig").rglob("*.py")):
        module = module_name(path, ROOT)
        if package_of(module) == "infer":
            continue
        wrong.extend(plan_decisions(path))
    assert wrong == []


def test_the_plan_checks_see_a_decision_made_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "from dataclasses import replace\n"
        "def f(plan, entry):\n"
        "    keep = Plan([e for e in plan.functions])\n"
        "    return replace(entry, action='none'), replace(entry, line=2), Blocker('x')\n"
    )
    assert [x.split(" ", 1)[1] for x in plan_decisions(tmp_path / "m.py", tmp_path)] == [
        "replace",
        "Blocker",
    ]
    assert rule_code("autosig.rules.as106.sites") == "as106"
    assert rule_code("autosig.rules.as101_print") == "as101"
    assert rule_code("autosig.rules.context") is None


def unnamed_modules(root: Path) -> list[str]:
    """Modules of ``autosig/`` the design doc's module table does not name: a module is
    named in its package's row (``as106/rule.py`` for ``autosig/rules/as106/rule.py``),
    a top-level module by its path (``autosig/errors.py``)."""
    rows = {
        line.split("`")[1]: line
        for line in (root / "docs" / "design.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `autosig/")
    }
    missing = []
    for path in sorted((root / "autosig").rglob("*.py")):
        parts = path.relative_to(root / "autosig").parts
        if parts[-1] == "__init__.py" or parts[-1] == "__main__.py":
            continue
        if len(parts) == 1:
            named = f"autosig/{parts[0]}" in rows
        else:
            row = rows.get(f"autosig/{parts[0]}/", "")
            named = f"`{'/'.join(parts[1:])}`" in row
        if not named:
            missing.append(path.relative_to(root).as_posix())
    return missing


def test_the_design_doc_names_every_module() -> None:
    """A reader finds every module, and its one job, in ``docs/design.md``."""
    assert unnamed_modules(ROOT) == []
