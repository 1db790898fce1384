"""Which attributes a Python file may change, by name, found from its tokens alone.

``analysis/project_writes`` runs this over the project's other files for AS106's
per-instance cache, so it must never miss a write it could see: it over-reports (a
write to another object's attribute of the same name counts) rather than under-reports.
Found, per statement, including one-line bodies of compound statements:

- stores: ``x.attr = ...`` (tuple, chained, augmented and annotated targets), ``del``,
  item stores ``x.attr[k] = ...``, ``for``/comprehension/``with ... as`` targets, every
  dotted name on the target side counting (``x.cfg.depth = 1`` changes what ``.cfg``
  leads to);
- in-place changes: a mutating method named on an attribute path, called or passed on
  (``x.attr.append(1)``, ``map(x.seen.add, xs)``, ``x.groups[k].append``), mutating
  functions given one (``random.shuffle(x.order)``, ``np.copyto(x.mean, m)``) and
  ``out=x.w``;
- ``setattr``/``__setattr__`` with a literal name (that name), or with a computed one,
  passed on, a ``__dict__`` or an aliased ``vars(x)``, or ``X.__init__(...)`` run on an
  existing object: any attribute (ANY);
- deep copies and pickles, through import aliases too (``from copy import deepcopy as
  dc``, ``import pickle as pkl``, ``Pickler``);
- in-place changes of a name imported with ``from m import NAME`` (``NAME[k] = v``,
  ``NAME.update(...)``), noted under ``NAME``: the module's variable changes.

Writes an ``__init__`` makes directly to its own ``self`` (``self.attr = ...``,
``self.attr.append(...)``, ``setattr(self, ...)``, ``self.__dict__.update(...)``, a base
class's ``__init__`` run on it) set up the object being made and are not counted, unless
``self`` is rebound or the write sits in a lambda (it runs later). What this cannot see:
writes through an alias (``items = x.items; items.append(1)``) and code outside Python
files (notebooks).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field

MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add"}
    | {"discard", "popitem", "sort", "reverse", "write", "__setitem__", "__setattr__"}
)
"""Methods that change a Python container (or file) in place."""

ANY = "*"
"""The attribute name under which writes that may set any attribute are kept."""

MUTATING_METHODS = MUTATORS | frozenset(
    {"appendleft", "extendleft", "rotate", "move_to_end", "subtract", "fill", "resize"}
    | {"difference_update", "intersection_update", "symmetric_difference_update"}
    | {"put", "put_nowait", "itemset", "setflags"}
)
"""Methods that change their object in place (containers, deques, arrays, queues)."""

MUTATING_FUNCTIONS = frozenset(
    {"shuffle", "copyto", "place", "putmask", "put_along_axis", "fill_diagonal"}
    | {"heappush", "heappop", "heapify", "heappushpop", "heapreplace"}
    | {"insort", "insort_left", "insort_right", "setitem", "delitem"}
)
"""Functions that change their first argument in place."""

COPY_FUNCTIONS = {
    "copy": {"deepcopy"},
    "pickle": {"dump", "dumps", "Pickler"},
    "dill": {"dump", "dumps", "Pickler"},
    "cloudpickle": {"dump", "dumps", "Pickler"},
    "joblib": {"dump"},
}
"""Module -> functions that deep-copy or pickle an object."""

ASSIGNMENT_OPERATORS = frozenset(
    {"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=", "<<="}
)

COMPOUND = frozenset(
    {"if", "elif", "else", "for", "while", "try", "except", "finally", "with", "def", "class"}
    | {"match", "case"}
)
"""Statements whose header ends at a ``:`` and may have their body on the same line."""

OPENING, CLOSING = ("(", "[", "{"), (")", "]", "}")


@dataclass
class FileWrites:
    """What one file writes: attribute name (or ANY) -> lines; lines that deep-copy or pickle."""

    attributes: dict[str, list[int]] = field(default_factory=dict)
    copies: list[int] = field(default_factory=list)

    def note(self, name: str, token: tokenize.TokenInfo) -> None:
        lines = self.attributes.setdefault(ANY if name == "__dict__" else name, [])
        if token.start[0] not in lines:
            lines.append(token.start[0])


def scan_writes(text: str) -> FileWrites:
    """Every attribute write, ANY-attribute write and deep copy or pickle in ``text``."""
    found = FileWrites()
    try:
        statements = list(_statements(text))
    except (tokenize.TokenError, SyntaxError):
        found.attributes[ANY] = [1]  # unreadable: it may write anything
        return found
    copying = _copy_names(statements)
    imported = _from_imports(statements)
    blocks: list[tuple[int, str]] = []  # (indent level of a def or class, its __init__'s self)
    for level, tokens in statements:
        while blocks and blocks[-1][0] >= level:
            blocks.pop()
        setup = blocks[-1][1] if blocks else ""
        for part in _split_compound(tokens):
            setup = _Statement(part, found, setup, copying, imported).scan()
        if blocks:
            blocks[-1] = (blocks[-1][0], setup)  # ``self`` rebound: no set-up after it
        header = tokens[1:] if tokens[0].string == "async" else tokens
        if header and header[0].string == "class":
            blocks.append((level, ""))
        elif header and header[0].string == "def" and len(header) > 3:
            own = header[3].string if header[2].string == "(" else ""
            blocks.append((level, own if header[1].string == "__init__" else ""))
    return found


def _statements(text: str) -> Iterator[tuple[int, list[tokenize.TokenInfo]]]:
    """The indent level and significant tokens of each statement (continuation lines
    joined, ``;``-separated statements split)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}
    line: list[tokenize.TokenInfo] = []
    level = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in skip:
            continue
        if token.type == tokenize.INDENT:
            level += 1
        elif token.type == tokenize.DEDENT:
            level -= 1
        elif token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or (
            token.type == tokenize.OP and token.string == ";"
        ):
            if line:
                yield level, line
            line = []
        else:
            line.append(token)
    if line:
        yield level, line


def _split_compound(tokens: list[tokenize.TokenInfo]) -> Iterator[list[tokenize.TokenInfo]]:
    """A compound statement's header and, when on the same line, its body."""
    start = 1 if tokens[0].string == "async" else 0
    if start < len(tokens) and tokens[start].string in COMPOUND:
        colon = _top_level(tokens, {":"})
        if colon is not None:
            yield tokens[:colon]
            if colon + 1 < len(tokens):
                yield from _split_compound(tokens[colon + 1 :])
            return
    yield tokens


def _top_level(tokens: list[tokenize.TokenInfo], wanted: set[str], start: int = 0) -> int | None:
    """Index of the first token in ``wanted`` outside brackets, from ``start``."""
    depth = 0
    for i in range(start, len(tokens)):
        string = tokens[i].string
        if tokens[i].type == tokenize.OP and string in OPENING:
            depth += 1
        elif tokens[i].type == tokenize.OP and string in CLOSING:
            depth -= 1
        elif depth == 0 and string in wanted:
            return i
    return None


def _closing(tokens: list[tokenize.TokenInfo], start: int) -> int:
    """Index of the bracket closing the one at ``start`` (the last token if none)."""
    depth = 0
    for j in range(start, len(tokens)):
        if tokens[j].type == tokenize.OP and tokens[j].string in OPENING:
            depth += 1
        elif tokens[j].type == tokenize.OP and tokens[j].string in CLOSING:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def _opening(tokens: list[tokenize.TokenInfo], end: int) -> int:
    """Index of the bracket opening the one closed at ``end`` (0 if none)."""
    depth = 0
    for j in range(end, -1, -1):
        if tokens[j].type == tokenize.OP and tokens[j].string in CLOSING:
            depth += 1
        elif tokens[j].type == tokenize.OP and tokens[j].string in OPENING:
            depth -= 1
            if depth == 0:
                return j
    return 0


def _arguments(tokens: list[tokenize.TokenInfo], open_at: int) -> list[list[tokenize.TokenInfo]]:
    """The top-level arguments of the call whose ``(`` is at ``open_at``."""
    close = _closing(tokens, open_at)
    arguments, start = [], open_at + 1
    while start < close:
        comma = _top_level(tokens[:close], {","}, start)
        end = close if comma is None else comma
        arguments.append(tokens[start:end])
        start = end + 1
    return arguments


def _copy_names(statements: list[tuple[int, list[tokenize.TokenInfo]]]) -> dict[str, str]:
    """Local name -> what it is: a copying module (``pkl`` -> ``pickle``) or a copying
    function (``dc`` -> ``copy.deepcopy``), from the file's imports."""
    names = {module: module for module in COPY_FUNCTIONS} | {"deepcopy": "copy.deepcopy"}
    for _, tokens in statements:
        strings = [t.string for t in tokens]
        if strings[0] == "import":
            for part in _split_on(strings[1:], ","):
                root = part[0]
                if root in COPY_FUNCTIONS:
                    names[part[-1] if "as" in part else root] = root
        elif strings[0] == "from" and "import" in strings:
            module = strings[1]
            if module in COPY_FUNCTIONS:
                imported = [s for s in strings[strings.index("import") + 1 :] if s not in "()"]
                for part in _split_on(imported, ","):
                    if part and part[0] in COPY_FUNCTIONS[module]:
                        names[part[-1] if "as" in part else part[0]] = f"{module}.{part[0]}"
    return names


def _from_imports(statements: list[tuple[int, list[tokenize.TokenInfo]]]) -> dict[str, str]:
    """Local name -> the name it imports, for ``from m import NAME [as local]``: changing
    ``local``'s object in place changes ``m.NAME``'s."""
    names: dict[str, str] = {}
    for _, tokens in statements:
        strings = [t.string for t in tokens]
        if strings[0] != "from" or "import" not in strings:
            continue
        imported = [s for s in strings[strings.index("import") + 1 :] if s not in "()"]
        for part in _split_on(imported, ","):
            if part and part[0] != "*":
                names[part[-1] if "as" in part else part[0]] = part[0]
    return names


def _split_on(strings: list[str], separator: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for string in strings:
        if string == separator:
            parts.append([])
        else:
            parts[-1].append(string)
    return [p for p in parts if p]


class _Statement:
    """The writes of one simple statement (or compound header)."""

    def __init__(
        self,
        tokens: list[tokenize.TokenInfo],
        found: FileWrites,
        setup_self: str,
        copying: dict[str, str],
        imported: dict[str, str] | None = None,
    ) -> None:
        self.tokens = tokens
        self.strings = [t.string for t in tokens]
        self.found = found
        self.setup_self = setup_self
        self.copying = copying
        self.imported = imported or {}

    def scan(self) -> str:
        """Note the writes; the ``__init__``'s ``self`` for the statements after this one
        ("" once it is rebound)."""
        for span in self._target_spans():
            self._targets(span)
        for i, token in enumerate(self.tokens):
            if token.type != tokenize.NAME:
                continue
            if token.string in ("setattr", "__setattr__"):
                self._setattr(i)
            elif i > 0 and self.strings[i - 1] == "." and token.string in MUTATING_METHODS:
                self._mutated_receiver(i - 1)
            elif token.string == "__dict__":
                if not self._direct_setup(i - 1):
                    self.found.note(ANY, token)
            elif token.string == "vars" and self._next(i) == "(":
                self._vars(i)
            elif token.string == "__init__" and self._next(i) == "(" and i > 0:
                self._init_call(i)
            elif token.string in MUTATING_FUNCTIONS and self._next(i) == "(":
                arguments = _arguments(self.tokens, i + 1)
                if arguments:
                    self._dotted(arguments[0])
                    if any(t.string in ("vars", "__dict__") for t in arguments[0]):
                        self.found.note(ANY, token)
            elif token.string == "out" and self._next(i) == "=" and self._depth(i) > 0:
                end = _top_level(self.tokens, {",", ")"}, i + 2)
                self._dotted(self.tokens[i + 2 : end])
            self._copy(i)
        return self.setup_self

    # -- where the targets are -------------------------------------------------------
    def _target_spans(self) -> Iterator[tuple[int, int]]:
        strings = self.strings
        first = 1 if strings[0] == "async" else 0
        if strings[first] == "del":
            yield first + 1, len(strings)
        elif strings[first] != "for":  # a ``for`` header's target is found below
            yield 0, _last_assignment(self.tokens)
        for i, string in enumerate(strings):
            if string == "for" and self.tokens[i].type == tokenize.NAME:
                end = _top_level(self.tokens[: _enclosing_end(self.tokens, i)], {"in"}, i + 1)
                yield i + 1, end if end is not None else i + 1
            elif string == "as" and i + 1 < len(strings):
                end = _closing(self.tokens, i + 1) + 1 if strings[i + 1] == "(" else i + 4
                yield i + 1, min(end, len(strings))

    def _targets(self, span: tuple[int, int]) -> None:
        start, end = span
        for i in range(start, end):
            token = self.tokens[i]
            self._imported_object(i)
            if token.string == "." and i + 1 < end and self.tokens[i + 1].type == tokenize.NAME:
                if not self._direct_setup(i):
                    self.found.note(self.tokens[i + 1].string, self.tokens[i + 1])
            elif token.string == "getattr" and self._next(i) == "(":
                self._getattr_literal(i)
            elif token.string == "vars":
                self.found.note(ANY, token)
            elif (
                self.setup_self
                and token.string == self.setup_self
                and (i == 0 or self.strings[i - 1] != ".")
                and self._next(i) not in (".", "[")
            ):
                self.setup_self = ""  # ``self`` rebound: what follows is not set-up

    # -- writes of each kind ---------------------------------------------------------
    def _mutated_receiver(self, dot: int) -> None:
        """``<receiver>.<mutating method>``: every dotted name of the receiver changes."""
        start = dot - 1
        while start >= 0:
            string = self.strings[start]
            if string in CLOSING and self.tokens[start].type == tokenize.OP:
                start = _opening(self.tokens, start) - 1
            elif self.tokens[start].type == tokenize.NAME:
                if start > 0 and self.strings[start - 1] == ".":
                    start -= 2
                else:
                    break
            else:
                start += 1
                break
        start = max(start, 0)
        if self._direct_setup(dot - 2) and start == dot - 3:
            return  # ``self.attr.append(...)`` in ``__init__``
        self._dotted(self.tokens[start:dot])

    def _setattr(self, i: int) -> None:
        if self._next(i) != "(":
            self.found.note(ANY, self.tokens[i])  # passed on: it may set any attribute
            return
        arguments = _arguments(self.tokens, i + 1)
        own = self.setup_self
        if (
            self.strings[i] == "setattr"
            and own
            and arguments
            and [t.string for t in arguments[0]] == [own]
            and "lambda" not in self.strings[:i]
        ):
            return  # setattr(self, ...) in ``__init__``: set-up
        literal = next(
            (
                name
                for argument in arguments[:2]
                if len(argument) == 1
                and (name := _string_literal(argument[0])) is not None
                and name.isidentifier()
            ),
            None,
        )
        if literal is None:
            self.found.note(ANY, self.tokens[i])
            return
        if not (self.strings[i] == "__setattr__" and self._direct_setup(i - 1)):
            self.found.note(literal, self.tokens[i])
        if arguments and self.strings[i] == "setattr":
            self._dotted(arguments[0])

    def _vars(self, i: int) -> None:
        """``vars(x)`` whose result is mutated or kept (an alias of ``x.__dict__``)."""
        close = _closing(self.tokens, i + 1)
        after = self.strings[close + 1 : close + 3]
        before = self.strings[i - 1] if i > 0 else ""
        if (
            after[:1] == ["["]
            or (after[:1] == ["."] and after[1:2] and after[1] in MUTATING_METHODS)
            or before in ASSIGNMENT_OPERATORS
            or before == "return"
        ):
            self.found.note(ANY, self.tokens[i])

    def _init_call(self, i: int) -> None:
        """``X.__init__(...)`` on an existing object re-sets its attributes; ``super()``'s
        or a base class's run on the ``__init__``'s own ``self`` is set-up."""
        if self.strings[i - 1] != ".":
            return
        if i >= 2 and self.strings[i - 2] == ")":
            opener = _opening(self.tokens, i - 2)
            if opener > 0 and self.strings[opener - 1] == "super":
                return  # super().__init__(...), super(Cls, self).__init__(...)
        arguments = _arguments(self.tokens, i + 1)
        own = self.setup_self
        if own and arguments and [t.string for t in arguments[0]] == [own]:
            return
        self.found.note(ANY, self.tokens[i])

    def _copy(self, i: int) -> None:
        name = self.strings[i]
        if i >= 1 and self.strings[i - 1] == ".":
            module = self.copying.get(self.strings[i - 2], "") if i >= 2 else ""
            copies = module in COPY_FUNCTIONS and name in COPY_FUNCTIONS[module]
        else:
            copies = "." in self.copying.get(name, "")  # an imported copying function
        line = self.tokens[i].start[0]
        if copies and (self._next(i) == "(" or name == "Pickler"):
            if line not in self.found.copies:
                self.found.copies.append(line)

    # -- helpers ---------------------------------------------------------------------
    def _imported_object(self, i: int) -> None:
        """``CONFIG[k] = v`` / ``CONFIG.x = v`` on a name imported with ``from m import
        CONFIG``: the module's ``CONFIG`` changes (noted under its name)."""
        token = self.tokens[i]
        if (
            token.type == tokenize.NAME
            and token.string in self.imported
            and (i == 0 or self.strings[i - 1] != ".")
            and self._next(i) in (".", "[")
        ):
            self.found.note(self.imported[token.string], token)

    def _dotted(self, tokens: list[tokenize.TokenInfo]) -> None:
        """Every name after a dot in ``tokens`` (and ``getattr`` literals), and a name
        imported from another module at their root (its object changes)."""
        if tokens and tokens[0].type == tokenize.NAME and tokens[0].string in self.imported:
            self.found.note(self.imported[tokens[0].string], tokens[0])
        for j, token in enumerate(tokens):
            if token.string == "." and j + 1 < len(tokens) and tokens[j + 1].type == tokenize.NAME:
                self.found.note(tokens[j + 1].string, tokens[j + 1])
            elif token.string == "getattr" and j + 1 < len(tokens) and tokens[j + 1].string == "(":
                arguments = _arguments(tokens, j + 1)
                if len(arguments) > 1 and len(arguments[1]) == 1:
                    name = _string_literal(arguments[1][0])
                    self.found.note(name if name and name.isidentifier() else ANY, token)

    def _getattr_literal(self, i: int) -> None:
        self._dotted(self.tokens[i : _closing(self.tokens, i + 1) + 1])

    def _direct_setup(self, dot: int) -> bool:
        """The ``.`` at ``dot`` follows the ``__init__``'s own ``self`` directly
        (``self.attr``), outside a lambda."""
        own = self.setup_self
        return (
            bool(own)
            and dot >= 1
            and self.strings[dot] == "."
            and self.strings[dot - 1] == own
            and (dot == 1 or self.strings[dot - 2] != ".")
            and "lambda" not in self.strings[:dot]
        )

    def _next(self, i: int) -> str:
        return self.strings[i + 1] if i + 1 < len(self.strings) else ""

    def _depth(self, i: int) -> int:
        depth = 0
        for j in range(i):
            if self.tokens[j].type == tokenize.OP:
                if self.strings[j] in OPENING:
                    depth += 1
                elif self.strings[j] in CLOSING:
                    depth -= 1
        return depth


def _enclosing_end(tokens: list[tokenize.TokenInfo], i: int) -> int:
    """The end of the innermost bracket holding token ``i`` (the statement's end if none)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].type == tokenize.OP and tokens[j].string in OPENING:
            depth += 1
        elif tokens[j].type == tokenize.OP and tokens[j].string in CLOSING:
            depth -= 1
            if depth < 0:
                return j
    return len(tokens)


def _last_assignment(tokens: list[tokenize.TokenInfo]) -> int:
    """Index of the last assignment operator outside brackets (0: the line assigns nothing)."""
    depth, last = 0, 0
    for i, token in enumerate(tokens):
        if token.type != tokenize.OP:
            continue
        if token.string in OPENING:
            depth += 1
        elif token.string in CLOSING:
            depth -= 1
        elif depth == 0 and token.string in ASSIGNMENT_OPERATORS:
            last = i
    return last


def _string_literal(token: tokenize.TokenInfo) -> str | None:
    if token.type != tokenize.STRING:
        return None
    try:
        value = ast.literal_eval(token.string)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None
