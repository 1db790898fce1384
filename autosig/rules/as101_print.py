"""AS101: ``print`` inside a tf.function runs only while tracing."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

import libcst as cst

from autosig.rules.base import Invalid, Rule
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.metadata import iter_tree

MESSAGE = (
    "print() in tf.function `{name}` runs only while it is traced, not on every call; "
    "use tf.print to print each call's values"
)
TRACE_LOG_MESSAGE = (
    "print() in tf.function `{name}` runs only while it is traced; it logs tracing on "
    "purpose, so it is left as is"
)
BAD_FILE_MESSAGE = (
    "print() in tf.function `{name}` runs only while it is traced, not on every call; "
    "use tf.print (its output_stream takes sys.stdout, sys.stderr or 'file://path', "
    "not a file object, so this one is not fixed automatically)"
)

TRACE_WORDS = re.compile(r"\b(re)?trac(e|ed|es|ing)\b", re.IGNORECASE)
"""A message mentioning tracing/retracing is deliberate trace-time logging."""

PERCENT_SPEC = re.compile(
    r"%(?P<key>\([^)]*\))?(?P<flags>[#0\- +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
    r"[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)
STREAMS = {"sys.stdout", "sys.stderr"}

COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


class PrintInFunction(Rule):
    """## What it does
    Finds `print(...)` calls in code that runs inside a `tf.function`.

    ## Why is this bad?
    A `tf.function` runs its Python code once, while it is traced, to build a graph;
    later calls run the graph. `print` is Python, so it prints only during tracing,
    and it prints symbolic tensors (`Tensor("x:0", shape=(None,), dtype=float32)`),
    not values. It then goes silent: training "hangs" without logs, or prints again
    only when the function retraces. `tf.print` is a graph op and prints the values
    on every call.

    A print whose message mentions tracing (`print("Tracing step")`) is there on
    purpose, to see when the function retraces; it is reported but never rewritten.

    ## Example
    ```python
    @tf.function
    def step(x):
        loss = tf.reduce_mean(x)
        print(f"loss {loss:.3f}", file=sys.stderr)
        return loss
    ```

    ## Use instead
    ```python
    @tf.function
    def step(x):
        loss = tf.reduce_mean(x)
        tf.print("loss", loss, output_stream=sys.stderr)
        return loss
    ```

    ## Fix safety
    Safe, with visible differences in the output text. `tf.print` cannot format:
    f-strings, `%` and `str.format` with simple arguments are split into separate
    arguments, and their format specs (`:.3f`, `!r`, `%5d`) are dropped. Literal text
    around a placeholder is stripped of the blanks `tf.print`'s separator adds back.
    `sep=` and `end=` are kept, `file=sys.stdout/sys.stderr` becomes
    `output_stream=`, `flush=` is dropped (tf.print has none). `tf.print` writes to
    stderr by default, where `print` writes to stdout. A format that is not simple
    (named fields, `*` widths) is passed as one argument, formatted while tracing.
    A print to a file object is reported without a fix.
    """

    code = "AS101"
    name = "print-in-function"
    summary = "print() inside a tf.function runs only while tracing"
    fix_safety = "safe"
    VALID = [
        # the same code outside a tf.function
        "import tensorflow as tf\ndef f(x):\n    print(f'loss {x}')\n    return x\n",
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    tf.print('loss', x)\n    return x\n",
        # a helper defined elsewhere is not known to be traced
        "import tensorflow as tf\ndef log(x):\n    print(x)\n"
        "@tf.function\ndef f(x):\n    log(x)\n    return x\n",
        # a local function named print is not the builtin
        "import tensorflow as tf\n@tf.function\ndef f(x, print=tf.print):\n"
        "    print(x)\n    return x\n",
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n    print(x)\n    return x\n",
            "import tensorflow as tf\n@tf.function\ndef f(x):\n    tf.print(x)\n    return x\n",
        ),
        Invalid(
            "import tensorflow as tf2\n@tf2.function\ndef f(x):\n"
            "    print(f'loss {x:.3f} at step {i}')\n    return x\n",
            "import tensorflow as tf2\n@tf2.function\ndef f(x):\n"
            "    tf2.print('loss', x, 'at step', i)\n    return x\n",
        ),
        Invalid(
            "import sys\nimport tensorflow as tf\n@tf.function\ndef f(x):\n"
            '    print("loss %.2f (%d)" % (x, 3), sep="", file=sys.stderr, flush=True)\n'
            "    return x\n",
            "import sys\nimport tensorflow as tf\n@tf.function\ndef f(x):\n"
            '    tf.print("loss ", x, " (", 3, ")", sep="", output_stream=sys.stderr)\n'
            "    return x\n",
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x, y):\n"
            "    print('x={} y={}'.format(x, y), end='')\n    return x\n",
            "import tensorflow as tf\n@tf.function\ndef f(x, y):\n"
            "    tf.print('x=', x, 'y=', y, end='')\n    return x\n",
        ),
        Invalid(
            # no TensorFlow import in sight: use tf and add the import
            "from tensorflow import function\n@function\ndef f(x):\n"
            "    def inner():\n        print('x', x)\n    inner()\n    return x\n",
            "from tensorflow import function\nimport tensorflow as tf\n\n@function\ndef f(x):\n"
            "    def inner():\n        tf.print('x', x)\n    inner()\n    return x\n",
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n"
            "    print('Tracing f with', x.shape)\n    return x\n",
            None,
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x, log):\n"
            "    print(x, file=log)\n    return x\n",
            None,
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        for site, call in ctx.iter_traced(cst.Call):
            if not ctx.refers_to(call.func, "builtins.print"):
                continue
            name = site.site.qualname
            if _logs_tracing(call):
                yield Violation(call, TRACE_LOG_MESSAGE.format(name=name), fixable=False)
                continue
            replacement = _tf_print(ctx, call)
            if replacement is None:
                yield Violation(call, BAD_FILE_MESSAGE.format(name=name))
                continue
            yield Violation(
                call,
                MESSAGE.format(name=name),
                edits={call: replacement},
                imports=ctx.tf_imports(),
            )


def _logs_tracing(call: cst.Call) -> bool:
    """A string in the call mentions tracing (one walk: no ``libcst.matchers`` import on
    the path of the most common finding)."""
    return any(
        isinstance(node, (cst.SimpleString, cst.FormattedStringText))
        and TRACE_WORDS.search(node.value) is not None
        for node in iter_tree(call)
    )


def _tf_print(ctx: RuleContext, call: cst.Call) -> cst.Call | None:
    """The tf.print call replacing ``call``, or None when it cannot be written."""
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    strip = "sep" not in keywords
    args: list[cst.Arg] = []
    for index, arg in enumerate(call.args):
        last = index == len(call.args) - 1
        if arg.keyword is None:
            pieces = None if arg.star else _split(arg.value, strip)
            if pieces is None:
                args.append(arg)
                continue
            for position, piece in enumerate(pieces):
                if position < len(pieces) - 1:
                    args.append(cst.Arg(piece, comma=COMMA))
                else:
                    args.append(
                        cst.Arg(
                            piece, comma=arg.comma, whitespace_after_arg=arg.whitespace_after_arg
                        )
                    )
            continue
        keyword = arg.keyword.value
        if keyword == "file":
            if ctx.qualified_names(arg.value).isdisjoint(STREAMS):
                return None
            args.append(arg.with_changes(keyword=cst.Name("output_stream")))
        elif keyword == "flush":
            if last and args:
                args[-1] = args[-1].with_changes(
                    comma=arg.comma, whitespace_after_arg=arg.whitespace_after_arg
                )
        else:
            args.append(arg)
    return call.with_changes(func=ctx.tf_expr("print"), args=args)


def _split(value: cst.BaseExpression, strip: bool) -> list[cst.BaseExpression] | None:
    """A formatted string as separate tf.print arguments (None: leave the argument)."""
    if isinstance(value, cst.FormattedString):
        return _split_fstring(value, strip)
    if isinstance(value, cst.ConcatenatedString):
        parts: list[cst.BaseExpression] = []
        node: cst.BaseExpression = value
        strings: list[cst.BaseExpression] = []
        while isinstance(node, cst.ConcatenatedString):
            strings.append(node.left)
            node = node.right
        strings.append(node)
        if not any(isinstance(s, cst.FormattedString) for s in strings):
            return None
        for piece in strings:
            if isinstance(piece, cst.FormattedString):
                parts.extend(_split_fstring(piece, strip))
            else:
                parts.append(piece)
        return parts
    if (
        isinstance(value, cst.BinaryOperation)
        and isinstance(value.left, cst.SimpleString)
        and isinstance(value.operator, cst.Modulo)
    ):
        return _split_percent(value, strip)
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.SimpleString)
        and value.func.attr.value == "format"
    ):
        return _split_format(value, strip)
    return None


def _text(raw: str, strip: bool) -> str:
    return raw.strip(" \t") if strip else raw


def _split_fstring(node: cst.FormattedString, strip: bool) -> list[cst.BaseExpression]:
    prefix = node.prefix.replace("f", "").replace("F", "")
    quote = node.start[len(node.prefix) :]
    pieces: list[cst.BaseExpression] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            raw = _text(part.value.replace("{{", "{").replace("}}", "}"), strip)
            if raw:
                pieces.append(cst.SimpleString(f"{prefix}{quote}{raw}{quote}"))
        else:
            if part.equal is not None:
                label = cst.Module(body=[]).code_for_node(part.expression)
                pieces.append(cst.SimpleString(_literal(f"{label}=", quote)))
            pieces.append(part.expression)
    return pieces


def _split_percent(node: cst.BinaryOperation, strip: bool) -> list[cst.BaseExpression] | None:
    template = node.left.evaluated_value  # type: ignore[attr-defined]
    if not isinstance(template, str):
        return None  # bytes
    right = node.right
    if isinstance(right, cst.Tuple):
        if any(isinstance(e, cst.StarredElement) for e in right.elements):
            return None
        values = [e.value for e in right.elements]
    elif isinstance(right, (cst.Dict, cst.DictComp)):
        return None
    else:
        values = [right]
    texts: list[str] = []
    fields = 0
    position = 0
    current = ""
    for match in PERCENT_SPEC.finditer(template):
        current += template[position : match.start()]
        position = match.end()
        if match.group("type") == "%":
            current += "%"
            continue
        if match.group("key") or "*" in (match.group("width") or "") + (match.group("prec") or ""):
            return None
        texts.append(current)
        current = ""
        fields += 1
    if fields != len(values) or "%" in template[position:]:
        return None
    texts.append(current + template[position:])
    quote = node.left.quote  # type: ignore[attr-defined]
    return _interleave(texts, values, quote, strip)


def _split_format(node: cst.Call, strip: bool) -> list[cst.BaseExpression] | None:
    literal = node.func.value  # type: ignore[attr-defined]
    template = literal.evaluated_value
    if not isinstance(template, str):
        return None
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    named = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if any(a.star for a in node.args):
        return None
    texts: list[str] = []
    values: list[cst.BaseExpression] = []
    used: list[cst.BaseExpression] = []
    auto = 0
    current = ""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    for text, field, _spec, _conversion in parsed:
        current += text
        if field is None:
            continue
        if field == "":
            if auto >= len(positional):
                return None
            value = positional[auto]
            auto += 1
        elif field.isdigit() and int(field) < len(positional):
            value = positional[int(field)]
        elif field in named:
            value = named[field]
        else:
            return None  # attribute/index fields, mixed numbering mistakes
        if any(v is value for v in used) and not isinstance(value, (cst.Name, cst.Attribute)):
            return None  # evaluating a call twice would change the program
        used.append(value)
        texts.append(current)
        current = ""
        values.append(value)
    texts.append(current)
    return _interleave(texts, values, literal.quote, strip)


def _interleave(
    texts: list[str], values: list[cst.BaseExpression], quote: str, strip: bool
) -> list[cst.BaseExpression]:
    pieces: list[cst.BaseExpression] = []
    for index, text in enumerate(texts):
        text = _text(text, strip)
        if text:
            pieces.append(cst.SimpleString(_literal(text, quote)))
        if index < len(values):
            value = values[index]
            pieces.append(value.with_changes(lpar=[], rpar=[]) if _bare_ok(value) else value)
    return pieces


def _bare_ok(value: cst.BaseExpression) -> bool:
    """Parentheses around an atom are noise once it is its own argument."""
    return isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and bool(
        value.lpar
    )


def _literal(value: str, quote: str) -> str:
    """A Python string literal for ``value``, using ``quote``'s character if possible."""
    q = quote[0]
    if q in value and ("'" if q == '"' else '"') not in value:
        q = "'" if q == '"' else '"'
    escapes = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", q: "\\" + q}
    out = []
    for char in value:
        if char in escapes:
            out.append(escapes[char])
        elif not char.isprintable():
            out.append(repr(char)[1:-1])
        else:
            out.append(char)
    return q + "".join(out) + q
