"""AS107: a tf.function with neither ``input_signature`` nor ``reduce_retracing``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import libcst as cst

from autosig.analysis.module_view import ModuleView
from autosig.analysis.shape_reads import autograph_enabled, shape_use
from autosig.analysis.trace_state import settings_reason, state_reason
from autosig.rules.base import Invalid, Rule
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.source.skeleton import Keep

RETRACING_KEYWORDS = ("input_signature", "reduce_retracing", "experimental_relax_shapes")
"""Any of these, given explicitly (even ``=False``), is a decision we leave alone."""

MESSAGE = (
    "tf.function `{name}` has no input_signature and no reduce_retracing: it traces again "
    "for every new input shape; add reduce_retracing=True, or profile it "
    "(`autosig profile`) and let `autosig fix` write an input_signature"
)


class NoSignature(Rule):
    """## What it does
    Finds `tf.function`s that give neither `input_signature` nor `reduce_retracing`.

    ## Why is this bad?
    Without either, TensorFlow specialises the graph to the exact shapes (and Python
    values) of each call: every new batch size or sequence length means a new trace,
    which costs as much as hundreds of ordinary steps. `reduce_retracing=True` lets
    TensorFlow generalise to `None` dimensions after the second shape; an
    `input_signature` fixes the graph's inputs once and for all.

    ## Example
    ```python
    @tf.function
    def train_step(x, y):
        ...
    ```

    ## Use instead
    ```python
    @tf.function(reduce_retracing=True)
    def train_step(x, y):
        ...
    ```
    or, after `autosig profile`, the `input_signature` that `autosig fix --profile`
    infers from the recorded calls.

    ## Fix safety
    Safe only where the shape-use analysis proves it: `reduce_retracing=True` lets
    TensorFlow trace with `None` dimensions, and then `x.shape[0]` is `None`. So the
    fix is
    - *safe* when neither the function nor the project code it runs read a static
      dimension of any parameter (`x.shape[i]`, `len(x)`, `b, t = x.shape`,
      `x.shape.as_list()`, unpacking or iterating a tensor), hand a parameter to code
      outside the project, or draw stateful random numbers. The project code it runs
      includes helpers and methods, project Keras layers and models (in an attribute, a
      `keras.Sequential`, a functional model; their `call` and `build`), objects of
      project classes however they are reached (attributes, class attributes, imports,
      `Geometry.pairwise(...)`) and the functions given to `tf.map_fn`, `tf.scan`,
      `tf.while_loop`, `tf.vectorized_map` and Keras's equivalents. TensorFlow objects
      are known (`GradientTape`, `TensorArray`, `Variable.assign`, optimizers' `apply_gradients`,
      Keras losses and metrics, `strategy.run`, summary writers): they read no static size;
    - *unsafe* (`--unsafe-fixes`) when a parameter goes to code outside the project
      (a Keras layer or model may read its dimensions) or to code the analysis cannot
      resolve, when the traced function is not in the file, when it (or project code it
      runs) draws stateful random numbers (`tf.random.normal`, `tf.nn.dropout`,
      `tf.nn.nce_loss`'s sampler, `tf.image.sample_distorted_bounding_box`,
      `tf.image.random_*`: every API the table generated from TensorFlow's op registry
      lists; Python's or NumPy's RNG): each trace has its own random state, so fewer
      traces change the numbers drawn (stateless draws, `tf.random.Generator` and Keras
      3's seeded layers do not); or when it reads Python state while tracing that the
      project changes (a module variable a setter rebinds, a module dict `self.config`
      is bound to that a scheduler changes, `detector.settings.threshold` set by a
      driver): each trace keeps the value it read, and the reason names the line that
      changes it;
    - *not offered* (report only) when a static shape read was found: the report names
      the line; `tf.shape(x)[i]` is the form that works for every size.
    A tf.function without parameters is not reported (nothing can change shape), nor is
    one the profile plan decides (`fix --profile`). Every other argument of
    `tf.function` (`jit_compile`, `autograph`, ...) and its formatting is kept. An
    explicit `reduce_retracing=False` or `input_signature=None` is treated as a decision
    and not reported, and so is a tf.function that AS106 finds created again and again
    with no safe fix: a new object traces anyway, so neither option would help it.
    """

    code = "AS107"
    name = "no-signature"
    summary = "tf.function with neither input_signature nor reduce_retracing"
    fix_safety = "safe"
    # the shape-use analysis follows traced code into its callees; and AS106's re-created
    # sites (RuleContext.recreated_sites), which read everything AS106 declares
    skeleton_keeps = frozenset(
        {
            Keep.CALLEES,
            Keep.LOOP_CALLEES,
            Keep.REACHED,
            Keep.GLOBAL_WRITERS,
            Keep.SELF_SETTERS,
            Keep.ATTRIBUTE_WRITERS,
        }
    )
    VALID = [
        "import tensorflow as tf\n@tf.function(reduce_retracing=True)\ndef f(x):\n    return x\n",
        "import tensorflow as tf\n"
        "@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])\n"
        "def f(x):\n    return x\n",
        "import tensorflow as tf\n"
        "@tf.function(reduce_retracing=False)  # decided: exact shapes\ndef f(x):\n    return x\n",
        "import tensorflow as tf\nspec = [tf.TensorSpec([None])]\n"
        "def slow(x):\n    return x\nfast = tf.function(slow, spec)\n",
        # a plain function is not a tf.function
        "import tensorflow as tf\ndef f(x):\n    return x\n",
        # created anew on every call (AS106, no fix): reduce_retracing cannot help
        "import tensorflow as tf\ndef predict(model, x):\n    return tf.function(model)(x)\n",
        "import tensorflow as tf\nfor k in range(3):\n    f = tf.function(lambda x: x * k)\n"
        "    f(1)\n",
        # no parameter: nothing can change shape
        "import tensorflow as tf\n@tf.function\ndef reset_metrics():\n    return tf.zeros([3])\n",
        "import tensorflow as tf\nclass M:\n    @tf.function\n    def reset(self):\n"
        "        return tf.zeros([3])\n",
    ]
    INVALID = [
        Invalid(  # TensorFlow objects read no static size: a safe fix
            "import tensorflow as tf\nloss_object = tf.keras.losses.MeanSquaredError()\n"
            "metric = tf.keras.metrics.Mean()\nv = tf.Variable(0.0)\n@tf.function\n"
            "def f(x, y):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
            "        loss = loss_object(y, x)\n    metric(loss)\n"
            "    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(x)\n"
            "    v.assign_add(tf.reduce_sum(tape.gradient(loss, x)) + ta.size())\n    return loss\n",
            "import tensorflow as tf\nloss_object = tf.keras.losses.MeanSquaredError()\n"
            "metric = tf.keras.metrics.Mean()\nv = tf.Variable(0.0)\n"
            "@tf.function(reduce_retracing=True)\n"
            "def f(x, y):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
            "        loss = loss_object(y, x)\n    metric(loss)\n"
            "    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(x)\n"
            "    v.assign_add(tf.reduce_sum(tape.gradient(loss, x)) + ta.size())\n    return loss\n",
        ),
        Invalid(  # a project Keras layer inside keras.Sequential reads the batch size
            "import keras\nimport tensorflow as tf\nclass Flat(keras.layers.Layer):\n"
            "    def call(self, x):\n        return tf.reshape(x, [x.shape[0], -1])\n"
            "model = keras.Sequential([Flat()])\n@tf.function\ndef f(x):\n    return model(x)\n",
            None,
        ),
        Invalid(  # a project Keras model held in an attribute tiles to states.shape[0]
            "import tensorflow as tf\nclass Actor(tf.keras.Model):\n    def call(self, s):\n"
            "        return tf.tile(self.w, [s.shape[0], 1])\nclass Agent:\n"
            "    def __init__(self):\n        self.actor = Actor()\n    @tf.function\n"
            "    def act(self, s):\n        return self.actor(s)\n",
            None,
        ),
        Invalid(  # the function given to tf.map_fn reads its element's length
            "import tensorflow as tf\n@tf.function\ndef f(batch):\n"
            "    return tf.map_fn(lambda e: e / e.shape[0], batch)\n",
            None,
        ),
        Invalid(  # keras.ops.unstack needs the static size of the axis it splits
            "import keras\nimport tensorflow as tf\n@tf.function\ndef f(x):\n"
            "    return keras.ops.unstack(x, axis=1)[0]\n",
            None,
        ),
        Invalid(  # a @staticmethod reached through its class
            "import tensorflow as tf\nclass Geometry:\n    @staticmethod\n"
            "    def pairwise(p):\n        return tf.reshape(p, [p.shape[0], 1, -1])\n"
            "@tf.function\ndef f(points):\n    return Geometry.pairwise(points)\n",
            None,
        ),
        Invalid(  # a module global a setter rebinds is read while tracing
            "import tensorflow as tf\nTEMPERATURE = 1.0\ndef set_temperature(t):\n"
            "    global TEMPERATURE\n    TEMPERATURE = t\n@tf.function\n"
            "def f(logits):\n    return tf.nn.softmax(logits / TEMPERATURE)\n",
            "import tensorflow as tf\nTEMPERATURE = 1.0\ndef set_temperature(t):\n"
            "    global TEMPERATURE\n    TEMPERATURE = t\n@tf.function(reduce_retracing=True)\n"
            "def f(logits):\n    return tf.nn.softmax(logits / TEMPERATURE)\n",
            unsafe=True,
        ),
        Invalid(  # self.config is bound to a module dict that a scheduler changes
            "import tensorflow as tf\nCONFIG = {'scale': 0.0}\ndef schedule(epoch):\n"
            "    CONFIG['scale'] = 0.1 * epoch\nclass Policy(tf.Module):\n"
            "    def __init__(self):\n        self.config = CONFIG\n    @tf.function\n"
            "    def __call__(self, obs):\n        return obs + self.config['scale']\n",
            "import tensorflow as tf\nCONFIG = {'scale': 0.0}\ndef schedule(epoch):\n"
            "    CONFIG['scale'] = 0.1 * epoch\nclass Policy(tf.Module):\n"
            "    def __init__(self):\n        self.config = CONFIG\n"
            "    @tf.function(reduce_retracing=True)\n"
            "    def __call__(self, obs):\n        return obs + self.config['scale']\n",
            unsafe=True,
        ),
        Invalid(  # a static shape read: reduce_retracing would make it None, so no fix
            "import tensorflow as tf\n@tf.function\ndef f(x):\n"
            "    ta = tf.TensorArray(tf.float32, size=x.shape[0])\n    return ta.stack()\n",
            None,
        ),
        Invalid(  # ... also in a project function it calls
            "import tensorflow as tf\ndef steps(seq):\n    return range(seq.shape[1])\n"
            "@tf.function\ndef f(seq):\n    for t in steps(seq):\n        pass\n    return seq\n",
            None,
        ),
        Invalid(  # stateful random draws: fewer traces change the numbers drawn
            "import tensorflow as tf\n@tf.function\ndef f(x):\n    return tf.nn.dropout(x, 0.5)\n",
            "import tensorflow as tf\n@tf.function(reduce_retracing=True)\n"
            "def f(x):\n    return tf.nn.dropout(x, 0.5)\n",
            unsafe=True,
        ),
        Invalid(  # nce_loss draws negative classes with a stateful candidate sampler
            "import tensorflow as tf\n@tf.function\ndef loss(w, b, labels, x):\n"
            "    return tf.nn.nce_loss(w, b, labels, x, num_sampled=5, num_classes=100)\n",
            "import tensorflow as tf\n@tf.function(reduce_retracing=True)\n"
            "def loss(w, b, labels, x):\n"
            "    return tf.nn.nce_loss(w, b, labels, x, num_sampled=5, num_classes=100)\n",
            unsafe=True,
        ),
        Invalid(  # so does sample_distorted_bounding_box (Inception-style cropping)
            "import tensorflow as tf\n@tf.function\ndef crop(image, boxes):\n"
            "    begin, size, _ = tf.image.sample_distorted_bounding_box(\n"
            "        tf.shape(image), boxes, min_object_covered=0.1)\n"
            "    return tf.slice(image, begin, size)\n",
            "import tensorflow as tf\n@tf.function(reduce_retracing=True)\ndef crop(image, boxes):\n"
            "    begin, size, _ = tf.image.sample_distorted_bounding_box(\n"
            "        tf.shape(image), boxes, min_object_covered=0.1)\n"
            "    return tf.slice(image, begin, size)\n",
            unsafe=True,
        ),
        Invalid(  # a draw in a project helper the traced code calls
            "import tensorflow as tf\ndef negatives(docs):\n    return tf.random.shuffle(docs)\n"
            "@tf.function\ndef score(queries, docs):\n"
            "    return tf.reduce_sum(queries * negatives(docs), axis=-1)\n",
            "import tensorflow as tf\ndef negatives(docs):\n    return tf.random.shuffle(docs)\n"
            "@tf.function(reduce_retracing=True)\ndef score(queries, docs):\n"
            "    return tf.reduce_sum(queries * negatives(docs), axis=-1)\n",
            unsafe=True,
        ),
        Invalid(  # stateless draws repeat for the same seed, whatever the trace count: safe
            "import tensorflow as tf\n@tf.function\ndef f(x, seed):\n"
            "    return x + tf.random.stateless_normal(tf.shape(x), seed=seed)\n",
            "import tensorflow as tf\n@tf.function(reduce_retracing=True)\ndef f(x, seed):\n"
            "    return x + tf.random.stateless_normal(tf.shape(x), seed=seed)\n",
        ),
        Invalid(  # a Keras model may read the dimensions it is handed
            "import tensorflow as tf\n@tf.function\ndef f(model, x):\n    return model(x)\n",
            "import tensorflow as tf\n@tf.function(reduce_retracing=True)\n"
            "def f(model, x):\n    return model(x)\n",
            unsafe=True,
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n    return x\n",
            "import tensorflow as tf\n@tf.function(reduce_retracing=True)\n"
            "def f(x):\n    return x\n",
        ),
        Invalid(
            "import tensorflow as tf2\n@tf2.function(jit_compile=True)\ndef f(x):\n    return x\n",
            "import tensorflow as tf2\n@tf2.function(jit_compile=True, reduce_retracing=True)\n"
            "def f(x):\n    return x\n",
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function()\ndef f(x):\n    return x\n",
            "import tensorflow as tf\n@tf.function(reduce_retracing=True)\n"
            "def f(x):\n    return x\n",
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function(\n    jit_compile=True,\n    autograph=False,\n)\n"
            "def f(x):\n    return x\n",
            "import tensorflow as tf\n@tf.function(\n    jit_compile=True,\n    autograph=False,\n"
            "    reduce_retracing=True,\n)\ndef f(x):\n    return x\n",
        ),
        Invalid(  # an end-of-line comment stays on its argument's line
            "import tensorflow as tf\ndef a(x):\n    return x\nf = tf.function(\n"
            "    a,  # the fn\n    jit_compile=True,\n)\n",
            "import tensorflow as tf\ndef a(x):\n    return x\nf = tf.function(\n"
            "    a,  # the fn\n    jit_compile=True,\n    reduce_retracing=True,\n)\n",
        ),
        Invalid(
            "import tensorflow as tf\ndef a(x):\n    return x\nf = tf.function(  # open\n"
            "    a  # the fn\n)\n",
            "import tensorflow as tf\ndef a(x):\n    return x\nf = tf.function(  # open\n"
            "    a,  # the fn\n    reduce_retracing=True\n)\n",
        ),
        Invalid(
            "import tensorflow as tf\ndef slow(x):\n    return x\nfast = tf.function(slow)\n",
            "import tensorflow as tf\ndef slow(x):\n    return x\n"
            "fast = tf.function(slow, reduce_retracing=True)\n",
        ),
        Invalid(
            "from tensorflow import function\nclass M:\n    @function\n    def step(self, x):\n"
            "        return x\n",
            "from tensorflow import function\nclass M:\n"
            "    @function(reduce_retracing=True)\n    def step(self, x):\n        return x\n",
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        recreated = ctx.recreated_sites
        for site in ctx.sites:
            if _has_retracing_decision(site) or id(site) in recreated:
                continue
            params = _parameters(site)
            if params is not None and not params:
                continue  # nothing to relax: no argument can change shape
            anchor = site.function if isinstance(site.function, cst.FunctionDef) else None
            node = anchor if anchor is not None else (site.call or site.tf_reference)
            message = MESSAGE.format(name=site.site.qualname)
            safety, why = _static_safety(ctx, site, params)
            if safety == "none":
                yield Violation(
                    node=node,
                    message=f"{message}; not fixed: {why}",
                    function=site.site.qualname,
                    fixable=False,
                )
                continue
            yield Violation(
                node=node,
                message=message if why is None else f"{message} (unsafe: {why})",
                edits=_fix(site),
                function=site.site.qualname,
                fix_safety=safety,
            )


def _parameters(site: FunctionSite) -> list[str] | None:
    """The traced function's parameters but ``self``/``cls``; None if not in this file."""
    function = site.function
    if function is None:
        return None
    params = function.params
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if site.site.is_method and names and names[0] in ("self", "cls"):
        names = names[1:]
    names += [p.name.value for p in params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names


def _static_safety(
    ctx: RuleContext, site: FunctionSite, params: list[str] | None
) -> tuple[str, str | None]:
    """("safe", None), ("unsafe", why) or ("none", why) for adding reduce_retracing.

    reduce_retracing relaxes any dimension that varies between calls, so a static
    read of a shape in the function (or the project code it calls) could see None.
    """
    if params is None or site.function is None:
        return "unsafe", "the traced function is not in this file, so its shape reads are unknown"
    use = shape_use(
        ModuleView(ctx.wrapper, ctx.project_modules),
        site.function,
        params,
        autograph=autograph_enabled(site.site.decorator_args),
    )
    reads = [r for found in use.reads.values() for r in found]
    definite = [r for r in reads if r.definite]
    if definite:
        return (
            "none",
            f"{definite[0].against_reduce_retracing()}; use tf.shape() there, or profile it",
        )
    if use.random_draws:
        return "unsafe", (
            f"it draws stateful random numbers ({use.random_draws[0].describe()}): fewer "
            "traces change the numbers drawn"
        )
    changed = state_reason(
        use.state_changes(ctx.project_writes, Path(ctx.path).name)
    ) or settings_reason(use.state_reads)
    if changed is not None:
        return "unsafe", changed
    if reads:
        return "unsafe", f"{reads[0].describe()}; a None dimension there is not proven safe"
    return "safe", None


def _has_retracing_decision(site: FunctionSite) -> bool:
    if site.call is None:
        return False
    positional = [arg for arg in site.call.args if arg.keyword is None and not arg.star]
    wraps_function = site.decorator is None
    if len(positional) > (1 if wraps_function else 0):
        return True  # tf.function(f, [specs]): input_signature given positionally
    if any(arg.star for arg in site.call.args):
        return True  # tf.function(f, **options): we cannot see what it sets
    return any(
        arg.keyword is not None and arg.keyword.value in RETRACING_KEYWORDS
        for arg in site.call.args
    )


NEW_ARG = cst.Arg(
    keyword=cst.Name("reduce_retracing"),
    value=cst.Name("True"),
    equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    ),
)


def _fix(site: FunctionSite) -> dict[cst.CSTNode, cst.CSTNode]:
    if site.call is None:
        if site.decorator is None:
            return {}
        call = cst.Call(func=site.decorator.decorator, args=[NEW_ARG])
        return {site.decorator: site.decorator.with_changes(decorator=call)}
    return {site.call: site.call.with_changes(args=append_arg(site.call, NEW_ARG))}


def append_arg(call: cst.Call, new: cst.Arg) -> list[cst.Arg]:
    """``call``'s arguments plus ``new`` at the end, in the call's own comma style.

    A trailing comma stays trailing (``new`` gets it) and multi-line calls keep one
    argument per line: the separator after the old last argument copies the one
    between earlier arguments (or the whitespace after the opening parenthesis). A
    comment at the end of the old last argument's line stays on that line.
    """
    args = list(call.args)
    if not args:
        return [new]
    last = args[-1]
    if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
        between = args[-2].comma.whitespace_after
    else:
        between = call.whitespace_before_args
    if isinstance(last.comma, cst.Comma):
        after = last.comma.whitespace_after  # up to the closing parenthesis
        kept, moved = _split_line_end(between, after)
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=kept))
        args.append(new.with_changes(comma=last.comma.with_changes(whitespace_after=moved)))
        return args
    if isinstance(between, cst.ParenthesizedWhitespace):  # one per line
        kept, moved = _split_line_end(between, last.whitespace_after_arg)
    else:
        kept, moved = cst.SimpleWhitespace(" "), last.whitespace_after_arg
    args[-1] = last.with_changes(
        comma=cst.Comma(whitespace_after=kept), whitespace_after_arg=cst.SimpleWhitespace("")
    )
    args.append(new.with_changes(whitespace_after_arg=moved))
    return args


def _split_line_end(
    between: cst.BaseParenthesizableWhitespace, after: cst.BaseParenthesizableWhitespace
) -> tuple[cst.BaseParenthesizableWhitespace, cst.BaseParenthesizableWhitespace]:
    """Whitespace after the old last argument and after the new one.

    ``between`` separates two arguments (its line break and the next argument's
    indentation); ``after`` ran from the old last argument to the closing parenthesis.
    The old argument keeps its own end-of-line comment; the new one ends the same way
    the old one did, without that comment.
    """
    if not isinstance(between, cst.ParenthesizedWhitespace):
        return between, after  # one line: a comment before ")" stays before ")"
    if not isinstance(after, cst.ParenthesizedWhitespace):
        return between.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=()), after
    kept = between.with_changes(first_line=after.first_line, empty_lines=())
    return kept, after.with_changes(first_line=cst.TrailingWhitespace())
