"""optimizer.build(...) before the first train step: where it goes, and where it must not.

Static (no TensorFlow): the profile records are made by hand and the source is only
parsed. ``tests/test_optimizer_build_tf.py`` runs the rewrites with TensorFlow.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from autosig.analysis.optimizer_build import NoBuild, OptimizerBuild, plan_optimizer_build
from autosig.infer.observations import InferOptions
from autosig.infer.observed import variable_creation_retraces
from autosig.infer.plan import BuildFirst, Plan
from autosig.infer.planning import plan_fixes
from autosig.profile.format import CallSignature, FunctionRecord, Profile, TraceEvent
from autosig.rewrite import engine
from autosig.rules.context import RuleContext
from autosig.rules.registry import select_rules

HEAD = "import tensorflow as tf\n"
FUNCTIONAL = (
    "inputs = tf.keras.Input(shape=(4,))\n"
    "model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))\n"
)
STEP = (
    "@tf.function\ndef train_step(x, y):\n    with tf.GradientTape() as tape:\n"
    "        loss = tf.reduce_mean((model(x) - y) ** 2)\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n"
)


def _plan(text: str, name: str = "train_step") -> OptimizerBuild | NoBuild:
    ctx = RuleContext.from_text(text, "m.py")
    (site,) = [s for s in ctx.sites if s.site.qualname.endswith(name)]
    return plan_optimizer_build(ctx, site.function)


def _inserted(text: str, name: str = "train_step") -> str:
    found = _plan(text, name)
    assert isinstance(found, OptimizerBuild), found
    return found.describe()


def _refused(text: str, name: str = "train_step") -> str:
    found = _plan(text, name)
    assert isinstance(found, NoBuild), found
    return found.reason


# -- where the build goes ---------------------------------------------------------------------


def test_after_the_optimizer_of_a_functional_model() -> None:
    text = HEAD + FUNCTIONAL + "optimizer = tf.keras.optimizers.Adam(1e-3)\nN = 3\n" + STEP
    assert _inserted(text) == "`optimizer.build(model.trainable_variables)` after line 4"


def test_after_the_model_when_it_comes_second() -> None:
    text = (
        HEAD
        + "optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)\n"
        + "model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])\n"
        + STEP
    )
    assert _inserted(text) == "`optimizer.build(model.trainable_variables)` after line 3"


def test_after_the_statement_that_builds_the_model() -> None:
    text = (
        HEAD
        + "model = tf.keras.Sequential([tf.keras.layers.Dense(2)])\n"
        + "optimizer = tf.keras.optimizers.RMSprop()\n"
        + "model.build((None, 4))\n"
        + STEP
    )
    assert _inserted(text).endswith("after line 4")
    called = text.replace("model.build((None, 4))", "_ = model(tf.zeros([1, 4]))")
    assert _inserted(called).endswith("after line 4")


def test_input_shape_on_the_first_layer_builds_a_sequential() -> None:
    text = (
        HEAD
        + "model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])\n"
        + "optimizer = tf.keras.optimizers.Adam()\n"
        + STEP
    )
    assert _inserted(text).endswith("after line 3")


def test_the_variables_the_step_passes_are_the_ones_built() -> None:
    text = (
        HEAD
        + FUNCTIONAL
        + "head = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))\n"
        + "optimizer = tf.keras.optimizers.Adam()\n"
        + STEP.replace(
            "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
            "    variables = model.trainable_weights + head.trainable_weights\n"
            "    optimizer.apply_gradients(list(zip(grads, variables)))\n",
        )
    )
    assert _inserted(text) == (
        "`optimizer.build(model.trainable_weights + head.trainable_weights)` after line 5"
    )


def test_keras3_apply() -> None:
    base = HEAD + FUNCTIONAL + "optimizer = tf.keras.optimizers.Adam()\n"
    apply = STEP.replace(
        "optimizer.apply_gradients(zip(grads, model.trainable_variables))",
        "optimizer.apply(grads, trainable_variables=model.trainable_variables)",
    )
    assert _inserted(base + apply).startswith("`optimizer.build(model.trainable_variables)`")


def test_two_optimizers_of_a_gan_are_both_built() -> None:
    text = (
        HEAD
        + FUNCTIONAL
        + "critic = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))\n"
        + "g_opt = tf.keras.optimizers.Adam(1e-4)\nd_opt = tf.keras.optimizers.Adam(1e-4)\n"
        + "@tf.function\ndef train_step(x):\n"
        + "    with tf.GradientTape() as gt, tf.GradientTape() as dt:\n"
        + "        g = tf.reduce_mean(model(x))\n        d = tf.reduce_mean(critic(x))\n"
        + "    g_opt.apply_gradients(zip(gt.gradient(g, model.trainable_variables), "
        + "model.trainable_variables))\n"
        + "    d_opt.apply_gradients(zip(dt.gradient(d, critic.trainable_variables), "
        + "critic.trainable_variables))\n"
    )
    assert _inserted(text) == (
        "`g_opt.build(model.trainable_variables)`, `d_opt.build(critic.trainable_variables)` "
        "after line 6"
    )


def test_in_init_for_a_method_step() -> None:
    text = (
        HEAD
        + "class Trainer:\n    def __init__(self):\n"
        + "        self.model = tf.keras.Sequential([tf.keras.Input((3,)), "
        + "tf.keras.layers.Dense(1)])\n"
        + "        self.optimizer = tf.keras.optimizers.Adam()\n        self.steps = 0\n\n"
        + "    @tf.function\n    def step(self, x):\n        with tf.GradientTape() as t:\n"
        + "            loss = tf.reduce_sum(self.model(x))\n"
        + "        g = t.gradient(loss, self.model.trainable_variables)\n"
        + "        self.optimizer.apply_gradients(zip(g, self.model.trainable_variables))\n"
    )
    assert _inserted(text, "Trainer.step") == (
        "`self.optimizer.build(self.model.trainable_variables)` after line 5"
    )


def test_in_the_function_that_sets_up_a_nested_step() -> None:
    text = (
        HEAD
        + "def main(data):\n    inputs = tf.keras.Input(shape=(4,))\n"
        + "    model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(2)(inputs))\n"
        + "    optimizer = tf.keras.optimizers.Adam()\n\n"
        + "".join("    " + line + "\n" for line in STEP.splitlines())
        + "    for x, y in data:\n        train_step(x, y)\n"
    )
    assert _inserted(text, "train_step") == (
        "`optimizer.build(model.trainable_variables)` after line 5"
    )


# -- where it must not go -------------------------------------------------------------------------

OPT = "optimizer = tf.keras.optimizers.Adam()\n"
REFUSED = {
    "a subclassed model builds on its first call": (
        HEAD + "class Net(tf.keras.Model):\n    pass\nmodel = Net()\n" + OPT + STEP,
        "may not be built",
    ),
    "a Sequential without Input": (
        HEAD + "model = tf.keras.Sequential([tf.keras.layers.Dense(2)])\n" + OPT + STEP,
        "may not be built",
    ),
    "a model made by a function": (
        HEAD + "def make():\n    return None\nmodel = make()\n" + OPT + STEP,
        "may not be built",
    ),
    "layers frozen later": (
        HEAD + FUNCTIONAL + OPT + "model.layers[1].trainable = False\n" + STEP,
        "changes `.trainable`",
    ),
    "a layer added later": (
        HEAD
        + "model = tf.keras.Sequential([tf.keras.Input((4,))])\n"
        + OPT
        + "model.add(tf.keras.layers.Dense(2))\n"
        + STEP,
        "changes the layers of `model`",
    ),
    "moving averages": (
        HEAD + FUNCTIONAL + "optimizer = tf.keras.optimizers.Adam(use_ema=True)\n" + STEP,
        "use_ema",
    ),
    "keyword arguments unpacked": (
        HEAD + FUNCTIONAL + "optimizer = tf.keras.optimizers.Adam(**{})\n" + STEP,
        "`*`/`**` arguments",
    ),
    "a legacy optimizer": (
        HEAD + FUNCTIONAL + "optimizer = tf.keras.optimizers.legacy.Adam()\n" + STEP,
        "not a Keras 3 optimizer",
    ),
    "an optimizer from elsewhere": (
        HEAD + "from lib import make\n" + FUNCTIONAL + "optimizer = make()\n" + STEP,
        "not a Keras 3 optimizer",
    ),
    "already built": (
        HEAD + FUNCTIONAL + OPT + "optimizer.build(model.trainable_variables)\n" + STEP,
        "already built (line 5)",
    ),
    "bound twice": (HEAD + FUNCTIONAL + OPT + OPT + STEP, "not bound once"),
    "the optimizer is a parameter of the step": (
        HEAD + FUNCTIONAL + STEP.replace("def train_step(x, y)", "def train_step(x, y, optimizer)"),
        "not bound once outside the function",
    ),
    "set up in different blocks": (
        HEAD + FUNCTIONAL + "if True:\n    " + OPT + STEP,
        "different blocks",
    ),
    "variables autosig cannot follow": (
        HEAD
        + FUNCTIONAL
        + OPT
        + STEP.replace("zip(grads, model.trainable_variables)", "pairs(grads)"),
        "does not name the variables",
    ),
    "the optimizer also trains other variables": (
        HEAD
        + FUNCTIONAL
        + OPT
        + STEP
        + "def warm_up(grads):\n    optimizer.apply_gradients(zip(grads, model.layers[1].weights))\n",
        "also applies gradients to other variables (line 13)",
    ),
    "no optimizer in the step": (
        HEAD + "@tf.function\ndef train_step(x):\n    return tf.Variable(x)\n",
        "no `apply_gradients(...)`",
    ),
    "self.optimizer set outside __init__": (
        HEAD
        + "class T:\n    def setup(self):\n        self.opt = tf.keras.optimizers.Adam()\n"
        + "        self.m = tf.keras.Sequential([tf.keras.Input((1,))])\n"
        + "    @tf.function\n    def step(self, g):\n"
        + "        self.opt.apply_gradients(zip(g, self.m.trainable_variables))\n",
        "not set once, in `__init__`",
    ),
}


@pytest.mark.parametrize("text, reason", REFUSED.values(), ids=list(REFUSED))
def test_no_build_where_it_could_change_training(text: str, reason: str) -> None:
    ast.parse(text)
    name = "T.step" if "class T" in text else "train_step"
    assert reason in _refused(text, name)


# -- the profile says when ------------------------------------------------------------------------


def _record(events: list[tuple[int, int, int]], traces: int | None = None) -> FunctionRecord:
    """events: (call, signature, instance)."""
    return FunctionRecord(
        path="m.py",
        qualname="train_step",
        line=0,
        source_sha256=None,
        editable=True,
        calls=10,
        traces=len(events) if traces is None else traces,
        signatures=[CallSignature({}, {}), CallSignature({}, {})],
        trace_events=[TraceEvent(call=c, signature=s, instance=i) for c, s, i in events],
    )


def test_a_call_traced_twice_is_variable_creation() -> None:
    assert variable_creation_retraces(_record([(0, 0, 0), (0, 0, 0)])) == (1, True)
    # a later shape change is another cause
    assert variable_creation_retraces(_record([(0, 0, 0), (0, 0, 0), (5, 1, 0)])) == (1, False)
    # each instance's first call: per-instance traces are no other cause
    record = _record([(0, 0, 0), (0, 0, 0), (3, 0, 1), (3, 0, 1)])
    assert variable_creation_retraces(record) == (2, True)
    # not every trace itemised: other causes cannot be ruled out
    assert variable_creation_retraces(_record([(0, 0, 0), (0, 0, 0)], traces=5)) == (1, False)
    assert variable_creation_retraces(_record([(0, 0, 0), (4, 0, 0)])) == (0, False)


def _profile(text: str, version: str | None) -> tuple[Profile, FunctionRecord]:
    ctx = RuleContext.from_text(text, "m.py")
    (site,) = [s for s in ctx.sites if s.site.qualname == "train_step"]
    record = dataclasses.replace(_record([(0, 0, 0), (0, 0, 0)]), line=site.site.line)
    record.signatures = record.signatures[:1]
    return Profile(functions=[record], tensorflow_version=version), record


def test_the_plan_carries_the_build_and_fix_writes_it_once() -> None:
    text = HEAD + FUNCTIONAL + OPT + STEP
    profile, _ = _profile(text, "2.21.0")
    plan = plan_fixes(profile, {"m.py": text}, InferOptions())
    (entry,) = plan.functions
    assert entry.build_first == BuildFirst(
        1, True, "optimizer.build(model.trainable_variables)", line=4
    )
    assert entry.action == "none"
    assert entry.reasons == (
        "retraced on its first call because it creates variables: autosig fix inserts "
        "`optimizer.build(model.trainable_variables)` after line 4",
    )
    result = engine.fix_text(text, "m.py", plan=plan, rules=select_rules(), unsafe_fixes=False)
    assert result.new_text == text.replace(
        OPT, OPT + "optimizer.build(model.trainable_variables)\n"
    )
    assert [f.code for f in result.applied] == ["optimizer_build"]
    assert result.left == [] and result.unfixed == 0
    again = engine.fix_text(
        result.new_text, "m.py", plan=plan, rules=select_rules(), unsafe_fixes=False
    )
    assert again.new_text == result.new_text
    # the old profile planned against the fixed file: nothing to do, and it says why
    replanned = plan_fixes(profile, {"m.py": result.new_text}, InferOptions())
    again = engine.fix_text(
        result.new_text, "m.py", plan=replanned, rules=select_rules(), unsafe_fixes=False
    )
    assert again.new_text == result.new_text
    assert any("already built (line 5)" in line for line in again.left), again.left


def test_no_build_from_a_profile_of_keras_2_or_of_unknown_version() -> None:
    text = HEAD + FUNCTIONAL + OPT + STEP
    for version, why in (("2.15.1", "Keras 2"), (None, "does not say which TensorFlow")):
        profile, _ = _profile(text, version)
        (entry,) = plan_fixes(profile, {"m.py": text}, InferOptions()).functions
        assert entry.build_first is not None and entry.build_first.statement is None
        assert why in entry.build_first.why_not
        result = engine.fix_text(
            text, "m.py", plan=Plan([entry]), rules=select_rules(), unsafe_fixes=False
        )
        assert result.new_text == text


def test_fix_verify_can_withhold_the_build() -> None:
    text = HEAD + FUNCTIONAL + OPT + STEP
    profile, _ = _profile(text, "2.21.0")
    plan = plan_fixes(profile, {"m.py": text}, InferOptions())
    result = engine.fix_text(
        text,
        "m.py",
        plan=plan,
        rules=select_rules(),
        unsafe_fixes=False,
        untouched=frozenset({"train_step"}),
    )
    assert result.new_text == text


def test_explain_names_the_statement_or_why_not() -> None:
    from autosig.explain.retraces import explain_function

    text = HEAD + FUNCTIONAL + OPT + STEP
    profile, record = _profile(text, "2.21.0")
    (entry,) = plan_fixes(profile, {"m.py": text}, InferOptions()).functions
    lines = explain_function(record, "p.json", entry).summary
    assert any(
        "fix: autosig fix inserts `optimizer.build(model.trainable_variables)` after line 4" in line
        for line in lines
    )
    refused = dataclasses.replace(
        entry, build_first=BuildFirst(1, True, why_not="`model` may not be built")
    )
    lines = explain_function(record, "p.json", refused).summary
    assert any("not automatic: `model` may not be built" in line for line in lines)


def test_a_suppressed_function_gets_no_build() -> None:
    text = (
        HEAD
        + FUNCTIONAL
        + OPT
        + STEP.replace("def train_step(x, y):", "def train_step(x, y):  # autosig: ignore")
    )
    profile, _ = _profile(text, "2.21.0")
    plan = plan_fixes(profile, {"m.py": text}, InferOptions())  # honours the comment
    assert plan.functions[0].build_first is None
    result = engine.fix_text(text, "m.py", plan=plan, rules=select_rules(), unsafe_fixes=False)
    assert "optimizer.build" not in result.new_text


def test_far_away_uses_of_the_optimizer_and_model_stop_the_insertion() -> None:
    """The plan reads the whole file (fix's own pass may parse a cut-down one): a plain
    function that trains the optimizer on other variables, freezes a layer or builds
    the optimizer must still stop the insertion."""
    filler = "".join(f"def unrelated_{i}(a):\n    return a + {i}\n" for i in range(20))
    base = HEAD + FUNCTIONAL + OPT + STEP + filler
    profile, _ = _profile(base, "2.21.0")
    for tail in (
        "def warm_up(g):\n    optimizer.apply_gradients(zip(g, model.layers[1].weights))\n",
        "def freeze():\n    model.layers[1].trainable = False\n",
        "def prepare():\n    optimizer.build(model.trainable_variables)\n",
    ):
        text = base + tail
        plan = plan_fixes(profile, {"m.py": text}, InferOptions())
        result = engine.fix_text(text, "m.py", plan=plan, rules=select_rules(), unsafe_fixes=False)
        assert result.new_text == text, tail
    plan = plan_fixes(profile, {"m.py": base}, InferOptions())
    result = engine.fix_text(base, "m.py", plan=plan, rules=select_rules(), unsafe_fixes=False)
    assert "optimizer.build" in result.new_text


def test_unsafe_when_another_file_of_the_project_may_set_trainable(tmp_path: Path) -> None:
    """A helper elsewhere that unfreezes layers before the first step would make the step
    pass variables the optimizer, built at set-up, does not know."""
    text = HEAD + FUNCTIONAL + OPT + STEP
    profile, _ = _profile(text, "2.21.0")
    plan = plan_fixes(profile, {"m.py": text}, InferOptions())
    results = {}
    for name, helper in {
        "plain": "def summary(model):\n    print(model.trainable)\n",
        "unfreezes": "def unfreeze(model):\n    for layer in model.layers:\n"
        "        layer.trainable = True\n",
    }.items():
        project = tmp_path / name
        project.mkdir()
        (project / "setup.cfg").write_text("")
        (project / "m.py").write_text(text)
        (project / "finetune.py").write_text(helper)
        for unsafe in (False, True):
            results[name, unsafe] = engine.fix_text(
                text,
                str(project / "m.py"),
                plan=plan,
                rules=select_rules(),
                unsafe_fixes=unsafe,
                profile_path_of="m.py",
            )
    built = text.replace(OPT, OPT + "optimizer.build(model.trainable_variables)\n")
    assert [f.safety for f in results["plain", False].applied] == ["safe"]
    assert results["plain", False].new_text == built
    refused = results["unfreezes", False]
    assert refused.new_text == text and refused.applied == []
    (line,) = [line for line in refused.left if "optimizer.build not inserted" in line]
    assert "unsafe fix, not applied without --unsafe-fixes: finetune.py:3 may change" in line
    forced = results["unfreezes", True]
    assert forced.new_text == built
    assert [f.safety for f in forced.applied] == ["unsafe"]


def test_the_stores_and_calls_are_collected_once_in_walk_order() -> None:
    """One pass over the file gathers the stores and method calls every question asks
    about (shared by optimizer_build and model_build); the change reported is the first
    the pass met (iter_tree's order, as when each question walked the file), whichever
    kind it is."""
    from autosig.analysis.optimizer_build import stores_and_calls

    text = (
        HEAD
        + FUNCTIONAL
        + "optimizer = tf.keras.optimizers.Adam()\n"
        + "model.add(tf.keras.layers.Dense(2))\n"
        + "model.trainable = False\n"
        + "del model.x\n"
        + STEP
    )
    ctx = RuleContext.from_text(text, "m.py")
    facts = stores_and_calls(ctx)
    assert stores_and_calls(ctx) is facts
    assert sorted(facts.stores) == ["trainable", "x"]
    assert [c.method for c in facts.method_calls(["add", "apply_gradients"])] == [
        "apply_gradients",
        "add",
    ]
    assert facts.is_store(facts.stores["x"][0].node)
    (site,) = [s for s in ctx.sites if s.site.qualname.endswith("train_step")]
    found = plan_optimizer_build(ctx, site.function)
    assert isinstance(found, NoBuild)
    assert found.reason.startswith("line 6 changes `.trainable`"), found.reason
