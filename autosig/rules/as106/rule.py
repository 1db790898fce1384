"""AS106: ``tf.function`` created inside a loop or on every call.

The rule reports what ``sites.py`` finds (through ``RuleContext.recreated``, computed
once per parse and shared with AS107 and the fix engine), with the fix it found.
"""

from __future__ import annotations

from collections.abc import Iterable

from autosig.rules.base import Invalid, Rule
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.skeleton import Keep


class FunctionCreatedPerCall(Rule):
    """## What it does
    Finds `tf.function`s created where they are re-created over and over: inside a loop,
    created and called in one expression (`tf.function(f)(x)`), or created in the body
    of a function that then calls it (so every call of the outer function makes a new
    one).

    ## Why is this bad?
    Traces are cached per `tf.function` object. A new object has an empty cache, so
    every creation means a full trace again: no retracing warning, just a function
    that is much slower than eager code.

    This rule looks at where functions are created, so unlike the others it also
    reports code outside any tf.function. Creation at module level, in a class body,
    in `__init__`/`build`/`setup`/`main` or a `test*` function, in a factory that
    returns the function, stored on `self`, or used in a loop of the creating function
    (created once per run) is not reported; neither is creation while another
    tf.function is traced (once per trace, not per call). A method that stores the
    new function on ``self`` on every call and calls it there is reported.

    ## Example
    ```python
    def predict(model, x):
        fn = tf.function(model)
        return fn(x)
    ```

    ## Use instead
    ```python
    class Predictor:
        def __init__(self, model):
            self.fn = tf.function(model)

        def predict(self, x):
            return self.fn(x)
    ```

    ## Fix safety
    A creation `name = tf.function(...)` that is a whole statement of a loop body is
    moved before the loop (out of every enclosing loop it can leave) when it calls
    nothing but `tf.TensorSpec` and the loop binds, deletes or stores into nothing it
    or the wrapped function reads, no other function rebinds those names, and `name`
    has no value before the loop (a loop that runs zero times would keep it). The fix
    is safe when the wrapped function is a `def` or lambda of this file whose trace
    reads only names bound once, and neither it nor a def it calls mutates outside
    state, prints or draws Python random numbers, times or other changing values,
    and no function of this file that the loop calls mutates what the trace reads;
    otherwise (`tf.function(model)`, `tf.function(self.step)`, a trace calling
    `random.random()`) it is unsafe, as the old code traced anew on each iteration and
    saw each change. All creations moving out of one loop nest move together, as
    unsafe as the least safe of them.

    A creation made on every call of a method (a decorated nested def,
    `name = tf.function(...)` or `tf.function(...)(...)` as a statement of the method's
    body) is cached on the instance: `step = getattr(self, "_autosig_<Class>_<method>_step",
    None)`, created under `if step is None:` and stored there (one function per
    instance, as a tf.function method has; decorator arguments kept). The cached trace
    reads `self`'s attributes once, where each call used to read them anew, so the fix
    is safe only when the attributes it reads (also through the methods it calls) are
    set in `__init__` and changed nowhere else in the file, the globals it reads are
    bound once and not mutated, the trace has no Python effects, stateful random draws
    or variable/Keras object creation, the class derives from nothing (a tf.Module or
    Keras class would also track and export the cached function), neither it nor its
    module copies or pickles objects (a copy would share the function, a deep copy or
    pickle of an instance holding one fails), and no closed-over
    local of the method had to become a keyword-only parameter (a tensor or NumPy array
    there becomes a graph input instead of a constant); otherwise it is unsafe, with
    the reasons in the message. A class with `__slots__`, `__getattr__` or
    `__setattr__`, a frozen or slotted dataclass, a nested def with `nonlocal`, options,
    defaults or a wrapped function that differ per call, a plain function, and a creation not run
    as a statement of its own (in a comprehension, an `if` or a conditional
    expression) get no fix: where to keep the function object is then a design
    decision. Code in other files is assumed not to rebind the attributes the trace
    reads.
    """

    code = "AS106"
    name = "function-created-per-call"
    summary = "tf.function created inside a loop or on every call"
    fix_safety = "safe"
    # the hoist follows the wrapped function into what it calls and what the loop calls;
    # the cache needs every write to what its trace reads (rules/as106/sites.py)
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
        "import tensorflow as tf\ndef step(x):\n    return x\nfast = tf.function(step)\n"
        "for x in range(3):\n    fast(x)\n",
        "import tensorflow as tf\nclass M:\n    def __init__(self, model):\n"
        "        self.fn = tf.function(model)\n",
        "import tensorflow as tf\ndef make(model):\n    fn = tf.function(model)\n    return fn\n",
        "import tensorflow as tf\ndef make(model):\n    @tf.function\n"
        "    def fn(x):\n        return model(x)\n    return fn\n",
        "import tensorflow as tf\ndef train(model, data):\n    @tf.function\n"
        "    def step(x):\n        return model(x)\n    for x in data:\n        step(x)\n",
        "import tensorflow as tf\nclass M:\n    def compile(self, model):\n"
        "        self.fn = tf.function(model)\n",
        "import tensorflow as tf\ndef test_double():\n    @tf.function\n"
        "    def double(x):\n        return 2 * x\n    assert double(1) == 2\n",
        "import tensorflow as tf\nclass P:\n    def __init__(self):\n        self._fn = None\n"
        "    def _step(self, x):\n        return x\n    def predict(self, x):\n"
        "        if self._fn is None:\n            self._fn = tf.function(self._step)\n"
        "        return self._fn(x)\n",
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\ndef step(x):\n    return x\n"
            "for x in range(3):\n    fast = tf.function(step)\n    fast(x)\n",
            "import tensorflow as tf\ndef step(x):\n    return x\n"
            "fast = tf.function(step)\nfor x in range(3):\n    fast(x)\n",
        ),
        Invalid(  # out of both loops, comments kept, jit_compile form
            "import tensorflow as tf\ndef norm(x):\n    return x / tf.norm(x)\n"
            "def run(data):\n    out = []\n\n    # epochs\n    for epoch in range(2):\n"
            "        for x in data:\n            # the step\n"
            "            step = tf.function(jit_compile=True)(norm)  # per batch\n"
            "            out.append(step(x))\n    return out\n",
            "import tensorflow as tf\ndef norm(x):\n    return x / tf.norm(x)\n"
            "def run(data):\n    out = []\n\n    # epochs\n    # the step\n"
            "    step = tf.function(jit_compile=True)(norm)  # per batch\n"
            "    for epoch in range(2):\n        for x in data:\n"
            "            out.append(step(x))\n    return out\n",
        ),
        Invalid(  # only out of the inner loop: the outer one rebinds what it reads
            "import tensorflow as tf\ndef train(make, data):\n    for size in (1, 2):\n"
            "        model = make(size)\n        for x in data:\n"
            "            fn = tf.function(model, reduce_retracing=True)\n            fn(x)\n",
            "import tensorflow as tf\ndef train(make, data):\n    for size in (1, 2):\n"
            "        model = make(size)\n"
            "        fn = tf.function(model, reduce_retracing=True)\n        for x in data:\n"
            "            fn(x)\n",
            unsafe=True,
        ),
        Invalid(  # reads the loop variable: no fix
            "import tensorflow as tf\nfor k in range(3):\n"
            "    f = tf.function(lambda x: x * k)\n    f(1)\n"
        ),
        Invalid(  # calls something that may build a new object each time: no fix
            "import tensorflow as tf\ndef run(make, data):\n    for x in data:\n"
            "        fn = tf.function(make())\n        fn(x)\n"
        ),
        Invalid(  # the function reads a global the loop changes: unsafe
            "import tensorflow as tf\nSCALE = 1\ndef scale(x):\n    return x * SCALE\n"
            "def run(data):\n    global SCALE\n    for x in data:\n"
            "        f = tf.function(scale)\n        print(f(x))\n    SCALE = 2\n",
            "import tensorflow as tf\nSCALE = 1\ndef scale(x):\n    return x * SCALE\n"
            "def run(data):\n    global SCALE\n    f = tf.function(scale)\n    for x in data:\n"
            "        print(f(x))\n    SCALE = 2\n",
            unsafe=True,
        ),
        Invalid(
            "import tensorflow as tf\ndef predict(model, x):\n    return tf.function(model)(x)\n"
        ),
        Invalid(
            "import tensorflow as tf2\ndef predict(model, x):\n"
            "    fn = tf2.function(jit_compile=True)(model)\n    return fn(x)\n"
        ),
        Invalid(
            "import tensorflow as tf\ndef predict(model, x):\n    @tf.function\n"
            "    def fn(y):\n        return model(y)\n    return fn(x)\n"
        ),
        Invalid(
            "import tensorflow as tf\nsteps = [tf.function(lambda x: x * k) for k in range(3)]\n"
        ),
        Invalid(  # a method's nested def: cached on the instance
            "import tensorflow as tf\nclass Predictor:\n    def __init__(self, model):\n"
            "        self.model = model\n\n    def predict(self, x):\n        @tf.function\n"
            "        def step(x):\n            return self.model(x)\n\n        return step(x)\n",
            "import tensorflow as tf\nclass Predictor:\n    def __init__(self, model):\n"
            "        self.model = model\n\n    def predict(self, x):\n"
            '        step = getattr(self, "_autosig_Predictor_predict_step", None)\n'
            "        if step is None:\n            @tf.function\n            def step(x):\n"
            "                return self.model(x)\n"
            "            self._autosig_Predictor_predict_step = step\n\n        return step(x)\n",
        ),
        Invalid(  # a bound method wrapped and called at once
            "import tensorflow as tf\nclass Clipper:\n    def __init__(self, limit):\n"
            "        self.limit = limit\n    def _clip(self, x):\n"
            "        return tf.clip_by_value(x, -self.limit, self.limit)\n"
            "    def __call__(self, x):\n        return tf.function(self._clip)(x)\n",
            "import tensorflow as tf\nclass Clipper:\n    def __init__(self, limit):\n"
            "        self.limit = limit\n    def _clip(self, x):\n"
            "        return tf.clip_by_value(x, -self.limit, self.limit)\n"
            "    def __call__(self, x):\n"
            '        clip_fn = getattr(self, "_autosig_Clipper_call_clip_fn", None)\n'
            "        if clip_fn is None:\n            clip_fn = tf.function(self._clip)\n"
            "            self._autosig_Clipper_call_clip_fn = clip_fn\n        return clip_fn(x)\n",
        ),
        Invalid(  # the trace reads an attribute another method changes: unsafe
            "import tensorflow as tf\nclass Detector:\n    def __init__(self, t):\n"
            "        self.t = t\n    def set_t(self, t):\n        self.t = t\n"
            "    def detect(self, s):\n        step = tf.function(lambda s: s > self.t)\n"
            "        return step(s)\n",
            "import tensorflow as tf\nclass Detector:\n    def __init__(self, t):\n"
            "        self.t = t\n    def set_t(self, t):\n        self.t = t\n"
            "    def detect(self, s):\n"
            '        step = getattr(self, "_autosig_Detector_detect_step", None)\n'
            "        if step is None:\n            step = tf.function(lambda s: s > self.t)\n"
            "            self._autosig_Detector_detect_step = step\n        return step(s)\n",
            unsafe=True,
        ),
        Invalid(  # the trace reads self.config, bound to a module dict a scheduler changes
            "import tensorflow as tf\nHPARAMS = {'scale': 1.0}\ndef schedule(epoch):\n"
            "    HPARAMS['scale'] = 0.1 * epoch\nclass Trainer:\n    def __init__(self):\n"
            "        self.config = HPARAMS\n    def step(self, x):\n"
            "        scaled = tf.function(lambda v: v * self.config['scale'])\n"
            "        return scaled(x)\n",
            "import tensorflow as tf\nHPARAMS = {'scale': 1.0}\ndef schedule(epoch):\n"
            "    HPARAMS['scale'] = 0.1 * epoch\nclass Trainer:\n    def __init__(self):\n"
            "        self.config = HPARAMS\n    def step(self, x):\n"
            '        scaled = getattr(self, "_autosig_Trainer_step_scaled", None)\n'
            "        if scaled is None:\n"
            "            scaled = tf.function(lambda v: v * self.config['scale'])\n"
            "            self._autosig_Trainer_step_scaled = scaled\n        return scaled(x)\n",
            unsafe=True,
        ),
        Invalid(  # ... or an attribute of a settings object another method changes
            "import tensorflow as tf\nclass Settings:\n    def __init__(self):\n"
            "        self.threshold = 0.5\n    def tune(self):\n        self.threshold = 0.8\n"
            "class Detector:\n    def __init__(self, settings):\n        self.settings = settings\n"
            "    def detect(self, s):\n"
            "        step = tf.function(lambda s: s > self.settings.threshold)\n"
            "        return step(s)\n",
            "import tensorflow as tf\nclass Settings:\n    def __init__(self):\n"
            "        self.threshold = 0.5\n    def tune(self):\n        self.threshold = 0.8\n"
            "class Detector:\n    def __init__(self, settings):\n        self.settings = settings\n"
            "    def detect(self, s):\n"
            '        step = getattr(self, "_autosig_Detector_detect_step", None)\n'
            "        if step is None:\n"
            "            step = tf.function(lambda s: s > self.settings.threshold)\n"
            "            self._autosig_Detector_detect_step = step\n        return step(s)\n",
            unsafe=True,
        ),
        Invalid(  # a loop hoist: the trace reads CONFIG through an alias the loop changes
            "import tensorflow as tf\nCONFIG = {'scale': 1.0}\nconfig = CONFIG\n"
            "def bump():\n    CONFIG['scale'] += 1\ndef scale(x):\n"
            "    return x * config['scale']\ndef run(data):\n    for x in data:\n"
            "        f = tf.function(scale)\n        print(f(x))\n        bump()\n",
            "import tensorflow as tf\nCONFIG = {'scale': 1.0}\nconfig = CONFIG\n"
            "def bump():\n    CONFIG['scale'] += 1\ndef scale(x):\n"
            "    return x * config['scale']\ndef run(data):\n    f = tf.function(scale)\n"
            "    for x in data:\n        print(f(x))\n        bump()\n",
            unsafe=True,
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        for _, violation in ctx.recreated:
            yield violation
