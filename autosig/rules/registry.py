"""The static rules by code: their classes, their documentation, and the selected ones.

The code space itself (every code, profile and verify codes' documentation,
``--select``/``--ignore`` patterns) is ``autosig.source.codes``; this module adds the
Rule classes of the static codes and the documentation of every code, read the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from autosig.errors import AutosigError
from autosig.source.codes import ALL_CODES, STATIC_CODES, CodeDoc, code_doc, selected_codes
from autosig.source.sites import FixSafety
from autosig.source.skeleton import Keep

if TYPE_CHECKING:
    from autosig.rules.base import Rule

STATIC_RULES: tuple[tuple[str, str, str], ...] = (
    ("AS101", "autosig.rules.as101_print", "PrintInFunction"),
    ("AS102", "autosig.rules.as102_random", "PythonRandom"),
    ("AS103", "autosig.rules.as103_python_state", "PythonState"),
    ("AS104", "autosig.rules.as104_list_append", "ListAppendInLoop"),
    ("AS105", "autosig.rules.as105_tensor_to_python", "TensorToPython"),
    ("AS106", "autosig.rules.as106.rule", "FunctionCreatedPerCall"),
    ("AS107", "autosig.rules.as107_no_signature", "NoSignature"),
)
"""(code, module, class) of every static rule, in code order.

The rule modules import libcst (and ``libcst.matchers``, 0.2-0.3 s), so nothing here
imports them until a rule must run: selecting codes, ``autosig rule`` and the README
table read what they need from the modules' source (``StaticDoc``), and
``select_rules``/``ALL_RULES`` import the classes on first use.
"""

TEXT_NEEDED: dict[str, re.Pattern[str]] = {
    "AS101": re.compile(r"\bprint\b"),
    "AS102": re.compile(r"random"),
    "AS103": re.compile(r"\b(?:global|nonlocal|class)\b"),
    "AS104": re.compile(r"\bappend\b"),
    "AS105": re.compile(r"\b(?:numpy|float|int|bool)\b"),
}
"""Text a file must contain for a rule to report anything in it (rules not named here
may report in any file that holds a tf.function). ``check`` imports and runs only the
rules whose text a file holds, so a file pays for no rule it cannot trigger:

- AS101 reports calls resolving to ``builtins.print``: the name is spelt in the file
  (a call, or the import that renames it);
- AS102 reports names resolving to ``random.*`` / ``numpy.random.*``: the module is
  named in an import or in the attribute path;
- AS103 reports changes to attributes of a method's first parameter (its class is in
  the file) and to names declared ``global``/``nonlocal``;
- AS104 reports ``<name>.append(...)``; AS105 ``.numpy()`` and the builtins ``float``,
  ``int``, ``bool`` (named in the file, as for AS101).

A test runs every rule's examples through this filter (no example may lose a finding).
"""


class StaticDoc:
    """A static rule's code, name, summary, fix safety and docstring, read from its
    module's source with ``ast`` (no import, no libcst) when first asked; a test keeps
    them equal to the imported class."""

    kind = "static"

    def __init__(self, code: str, module: str, class_name: str) -> None:
        self.code = code
        self.module = module
        self.class_name = class_name

    @functools.cached_property
    def _fields(self) -> dict[str, Any]:
        return _class_fields(self.module, self.class_name)

    @property
    def name(self) -> str:
        return self._fields["name"]

    @property
    def summary(self) -> str:
        return self._fields["summary"]

    @property
    def fix_safety(self) -> FixSafety:
        return self._fields.get("fix_safety", "none")

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self._fields.get("__doc__")

    @property
    def skeleton_keeps(self) -> frozenset[Keep]:
        return frozenset(Keep[name] for name in self._fields.get("skeleton_keeps", ()))

    def load(self) -> type[Rule]:
        import importlib

        return getattr(importlib.import_module(self.module), self.class_name)


def _class_fields(module: str, class_name: str) -> dict[str, Any]:
    """Constant class attributes and the docstring of ``module.class_name``, from source."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    if origin is None or not origin.endswith(".py"):
        return _imported_fields(module, class_name)
    with open(origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), origin)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            fields: dict[str, Any] = {"__doc__": ast.get_docstring(node, clean=False)}
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Constant)
                ):
                    fields[stmt.targets[0].id] = stmt.value.value
                elif (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == "skeleton_keeps"
                ):
                    fields["skeleton_keeps"] = [
                        n.attr
                        for n in ast.walk(stmt.value)
                        if isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name)
                        and n.value.id == "Keep"
                    ]
            if {"name", "summary"} <= fields.keys():
                return fields
    return _imported_fields(module, class_name)


def _imported_fields(module: str, class_name: str) -> dict[str, Any]:
    """The slow way, when the source cannot be read: import the class."""
    import importlib

    rule = getattr(importlib.import_module(module), class_name)
    return {
        "name": rule.name,
        "summary": rule.summary,
        "fix_safety": rule.fix_safety,
        "skeleton_keeps": [keep.name for keep in rule.skeleton_keeps],
        "__doc__": rule.__doc__,
    }


@functools.cache
def _static_doc(code: str) -> StaticDoc:
    for entry in STATIC_RULES:
        if entry[0] == code:
            return StaticDoc(*entry)
    raise KeyError(code)


@functools.lru_cache(maxsize=1)
def _all_rules() -> tuple[type[Rule], ...]:
    return tuple(_static_doc(code).load() for code in STATIC_CODES)


def __getattr__(name: str) -> Any:
    """``ALL_RULES`` (imports every rule module) and ``RULE_DOCS`` (reads their source)
    are computed on first use, so selecting codes never imports libcst."""
    if name == "ALL_RULES":
        return _all_rules()
    if name == "RULE_DOCS":
        return _rule_docs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=1)
def _rule_docs() -> dict[str, tuple[str, str]]:
    """code -> (one-line summary, fix safety) for every static, profile and verify code."""
    return {code: (_entry(code).summary, _entry(code).fix_safety) for code in ALL_CODES}


def get_rule(code: str) -> type[Rule]:
    """The static Rule class for ``code`` (AutosigError for unknown, profile or verify codes)."""
    entry = _entry(code)
    if isinstance(entry, CodeDoc):
        raise AutosigError(f"{entry.code} is a {entry.kind} finding, not a static rule")
    return entry.load()


def rule_name(code: str) -> str:
    return _entry(code).name


def rule_doc(code: str) -> str:
    """The rule's documentation (ruff's sections), dedented; AutosigError if unknown."""
    import inspect

    return inspect.cleandoc(_entry(code).__doc__ or "")


def _entry(code: str) -> StaticDoc | CodeDoc:
    entry = code_doc(code)
    return entry if entry is not None else _static_doc(code.strip().upper())


@functools.cache
def skeleton_keeps() -> frozenset[Keep]:
    """What the skeleton keeps for ``check`` and ``fix``: what any static rule declares it
    reads beyond the traced code (read from the rules' source, nothing imported). Every
    rule's, not only the selected ones': AS107 and the fix engine share AS106's facts."""
    return frozenset().union(*(_static_doc(code).skeleton_keeps for code in STATIC_CODES))


def select_rules(
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    text: str | None = None,
) -> list[Rule]:
    """Instances of the static rules selected (all by default), in code order; given
    ``text``, only those that may report in it (``TEXT_NEEDED``: the others are not
    even imported)."""
    codes = selected_codes(select, ignore)
    return [
        _static_doc(code).load()()
        for code in STATIC_CODES
        if code in codes and (text is None or _may_report(code, text))
    ]


def _may_report(code: str, text: str) -> bool:
    needed = TEXT_NEEDED.get(code)
    return needed is None or needed.search(text) is not None


def markdown_table() -> str:
    """The README's rule table, generated from the rules' own summaries."""
    rows = ["| code | name | fix | what it finds |", "|---|---|---|---|"]
    for code in ALL_CODES:
        summary, safety = _rule_docs()[code]
        rows.append(f"| {code} | {rule_name(code)} | {safety} | {summary} |")
    return "\n".join(rows) + "\n"
