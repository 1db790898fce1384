"""Where ``fix`` builds a lazily built Keras model (no TensorFlow: the plan and the edit).

The profile is the one ``model_build_cases.fix`` writes: the function traced twice on its
first call with float32 inputs of shape (16, 4) and (16, 1).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from model_build_cases import fix  # noqa: E402

from autosig.analysis.model_build import ModelInput, plan_model_build
from autosig.analysis.optimizer_build import NoBuild
from autosig.rules.context import RuleContext


def _fix(source: str, unsafe: bool = False) -> tuple[str, list[str], list[str]]:
    return fix(textwrap.dedent(source).lstrip(), "m.py", unsafe=unsafe)


def _inserted(source: str, new: str) -> list[str]:
    old = textwrap.dedent(source).lstrip().splitlines()
    return [line.strip() for line in new.splitlines() if line not in old]


SEQUENTIAL = """
    import tensorflow as tf
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    optimizer = tf.keras.optimizers.SGD()
    @tf.function
    def predict(x):
        return model(x)
"""

SUBCLASSED = """
    import tensorflow as tf

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    net = Net()
    seen = tf.keras.metrics.Mean()

    @tf.function
    def predict(x):
        return net(x, training=False)
"""


def test_a_sequential_without_input_is_built_from_the_first_calls_shape() -> None:
    new, applied, safety = _fix(SEQUENTIAL)
    assert applied == ["model_build"] and safety == ["safe"]
    assert _inserted(SEQUENTIAL, new) == ["model.build((None, 4))"]


def test_a_subclassed_model_is_called_once_on_zeros() -> None:
    new, applied, _ = _fix(SUBCLASSED)
    assert applied == ["model_build"]
    assert _inserted(SUBCLASSED, new) == ["net(tf.zeros((16, 4), tf.float32))"]


def test_the_fix_is_idempotent() -> None:
    new, _, _ = _fix(SUBCLASSED)
    again, applied, _ = _fix(new)
    assert again == new and applied == []


def test_a_model_with_its_inputs_or_built_already_is_left_alone() -> None:
    functional = """
        import tensorflow as tf
        inputs = tf.keras.Input((4,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
        @tf.function
        def predict(x):
            return model(x)
    """
    built = SEQUENTIAL.replace("Dense(2)])\n", "Dense(2)])\n    model.build((None, 4))\n")
    for source in (functional, built):
        new, applied, _ = _fix(source)
        assert applied == [] and new == textwrap.dedent(source).lstrip()


def test_a_model_changed_elsewhere_is_refused_with_the_line() -> None:
    source = SEQUENTIAL + "\n    def grow():\n        model.add(tf.keras.layers.Dense(1))\n"
    _, applied, _ = _fix(source)
    assert applied == []
    ctx = RuleContext.from_text(textwrap.dedent(source).lstrip(), "m.py")
    site = next(s for s in ctx.sites if s.function is not None)
    found = plan_model_build(ctx, site.function, {"x": ModelInput((16, 4), "float32")})
    assert isinstance(found, NoBuild) and "model.add" in found.reason


def test_a_parameter_rebound_in_the_function_is_not_a_model_input() -> None:
    source = SEQUENTIAL.replace("return model(x)", "x = x * 2\n        return model(x)")
    _, applied, _ = _fix(source)
    assert applied == []


def test_project_code_the_eager_call_would_run_again_makes_it_unsafe() -> None:
    noisy = SUBCLASSED.replace(
        "return self.dense(x)", 'print("calling")\n            return self.dense(x)'
    )
    new, applied, _ = _fix(noisy)
    assert applied == [] and new == textwrap.dedent(noisy).lstrip()
    new, applied, safety = _fix(noisy, unsafe=True)
    assert applied == ["model_build"] and safety == ["unsafe"]


def test_explain_advice_names_both_builds() -> None:
    from autosig.infer.plan import BuildFirst, ModelBuild

    build = BuildFirst(
        1,
        True,
        statement="optimizer.build(model.trainable_variables)",
        line=5,
        models=ModelBuild((("x", (16, 4), "float32"),), ("model.build((None, 4))",), 3),
    )
    assert build.advice() == (
        "autosig fix inserts `model.build((None, 4))` after line 3; then "
        "autosig fix inserts `optimizer.build(model.trainable_variables)` after line 5"
    )
    alone = BuildFirst(1, True, why_not="no apply_gradients", models=build.models, optimizer=False)
    assert alone.advice() == "autosig fix inserts `model.build((None, 4))` after line 3"


def test_a_build_that_would_be_the_imports_first_eager_work_is_unsafe() -> None:
    """Measured: ``model.build`` starts TensorFlow's runtime, after which
    ``tf.config.threading`` setters raise; a Sequential without inputs does not."""
    alone = SEQUENTIAL.replace("    optimizer = tf.keras.optimizers.SGD()\n", "")
    _, applied, _ = _fix(alone)
    assert applied == []
    _, applied, safety = _fix(alone, unsafe=True)
    assert applied == ["model_build"] and safety == ["unsafe"]


def test_no_model_build_when_the_optimizer_cannot_be_built_after_it() -> None:
    """Measured: the model built alone, the first step still traces twice (the optimizer's
    slots): nothing is inserted, and explain says both."""
    source = """
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.Adam(use_ema=True)
        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
    """
    new, applied, _ = _fix(source)
    assert applied == [] and new == textwrap.dedent(source).lstrip()


def test_explain_advice_of_an_unsafe_build_names_the_option_and_why() -> None:
    from autosig.infer.plan import ModelBuild

    build = ModelBuild((), ("net(tf.zeros((16, 4), tf.float32))",), 9, unsafe="it prints")
    assert build.advice() == (
        "autosig fix --unsafe-fixes inserts `net(tf.zeros((16, 4), tf.float32))` after "
        "line 9 (unsafe: it prints)"
    )
