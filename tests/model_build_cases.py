"""Programs whose tf.function builds a Keras model on its first call, run before and after
``fix`` builds the model (and then the optimizer) first.

Run as a script (one TensorFlow start for every case): each module is fixed the way
``autosig fix --profile`` does for a profile that saw the function traced twice on its
first call with inputs of shape (16, 4) (TensorFlow 2.21), then the original and the
fixed module run a few steps from the same seed, and then calls the profile never saw
(batches of 5 and 1 rows, a float64 NumPy batch). One JSON line per case gives the
outputs, every weight and optimizer variable after them, and the function's trace
count after the profiled steps. The test compares them; nothing here trusts autosig.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path

TRAIN = """
        def run(x, y, steps):
            out = [train_step(x, y) for _ in range(steps)]
            traces = train_step.experimental_get_tracing_count()
            unseen = [train_step(x[:5], y[:5]), train_step(x[:1], y[:1])]
            unseen.append(train_step(x.astype("float64")[:3], y[:3]))
            return out, traces, unseen, [model], optimizer
"""

CASES: dict[str, str] = {
    "sequential_predict": """
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(5, activation="relu"), tf.keras.layers.Dense(2)])
        scale = tf.Variable(2.0)
        @tf.function
        def predict(x):
            return model(x) * scale
        def run(x, y, steps):
            out = [predict(x) for _ in range(steps)]
            traces = predict.experimental_get_tracing_count()
            unseen = [predict(x[:5]), predict(x[:1]), predict(x.astype("float64")[:3])]
            return out, traces, unseen, [model], None
    """,
    "bare_dense_layer": """
        import tensorflow as tf
        layer = tf.keras.layers.Dense(3)
        bias = tf.constant(0.1)
        @tf.function
        def project(x):
            return tf.nn.relu(layer(x) + bias)
        def run(x, y, steps):
            out = [project(x) for _ in range(steps)]
            traces = project.experimental_get_tracing_count()
            unseen = [project(x[:5]), project(x[:1])]
            return out, traces, unseen, [layer], None
    """,
    "quickstart_subclassed_adam": """
        import tensorflow as tf
        from tensorflow.keras.layers import Dense, Dropout
        from tensorflow.keras import Model

        class MyModel(Model):
            def __init__(self):
                super().__init__()
                self.d1 = Dense(8, activation="relu")
                self.drop = Dropout(0.25)
                self.d2 = Dense(1)

            def call(self, x, training=False):
                return self.d2(self.drop(self.d1(x), training=training))

        model = MyModel()
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
    """
    + TRAIN,
    "sequential_without_input_sgd": """
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(5, activation="tanh"), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9)
        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
    """
    + TRAIN,
    "trainer_class_subclassed": """
        import tensorflow as tf

        class Net(tf.keras.Model):
            def __init__(self, width):
                super().__init__()
                self.hidden = tf.keras.layers.Dense(width, activation="relu")
                self.out = tf.keras.layers.Dense(1)

            def call(self, x):
                return self.out(self.hidden(x))

        class Trainer:
            def __init__(self):
                self.model = Net(6)
                self.optimizer = tf.keras.optimizers.RMSprop(learning_rate=0.01)

            @tf.function
            def step(self, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((self.model(x) - y) ** 2)
                grads = tape.gradient(loss, self.model.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                return loss

        def run(x, y, steps):
            trainer = Trainer()
            out = [trainer.step(x, y) for _ in range(steps)]
            traces = trainer.step.experimental_get_tracing_count()
            unseen = [trainer.step(x[:5], y[:5]), trainer.step(x[:1], y[:1])]
            other = Trainer()  # another instance: built in its own __init__
            unseen += [other.step(x, y), other.step(x[:5], y[:5])]
            return out, traces, unseen, [trainer.model, other.model], trainer.optimizer
    """,
}

UNSAFE = {
    "custom_layer_add_weight": """
        import random
        import tensorflow as tf

        class Scale(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1],), initializer="random_normal")

            def call(self, x):
                return x * self.w

        layer = Scale()
        picked = []

        @tf.function
        def scale(x):
            return layer(x)

        def run(x, y, steps):
            picked.append(random.random())  # Python's random between set-up and the first call
            out = [scale(x) for _ in range(steps)]
            traces = scale.experimental_get_tracing_count()
            return out + [tf.constant(picked)], traces, [scale(x[:5])], [layer], None
    """,
}
"""Cases whose build is labelled unsafe: written only with --unsafe-fixes; the script
runs them fixed that way too, to show what the label is about."""


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _run(path: Path, name: str, steps: int = 4) -> dict:
    import numpy as np
    import tensorflow as tf

    tf.keras.utils.set_random_seed(7)
    try:
        module = _load(path, name)
        rng = np.random.default_rng(7)
        x = rng.normal(size=(16, 4)).astype("float32")
        y = rng.normal(size=(16, 1)).astype("float32")
        out, traces, unseen, models, optimizer = module.run(x, y, steps)
    except Exception as exc:  # noqa: BLE001 - the comparison is the test
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
    return {
        "outputs": [np.asarray(v).tolist() for v in out],
        "unseen": [np.asarray(v).tolist() for v in unseen],
        "weights": [w.numpy().tolist() for m in models for w in m.weights],
        "slots": [v.numpy().tolist() for v in optimizer.variables] if optimizer else [],
        "traces": traces,
    }


def fix(text: str, path: str, unsafe: bool = False) -> tuple[str, list[str], list[str]]:
    """Fix ``text`` as ``fix --profile`` does for a function traced twice on its first
    call, with float32 tensors of shape (16, 4) and (16, 1) for its parameters."""
    from autosig.infer.observations import InferOptions
    from autosig.infer.planning import plan_fixes
    from autosig.profile.format import (
        CallSignature,
        FunctionRecord,
        ParamInfo,
        Profile,
        TraceEvent,
    )
    from autosig.rewrite import engine
    from autosig.rules.context import RuleContext
    from autosig.rules.registry import select_rules

    ctx = RuleContext.from_text(text, path)
    records = []
    for site in ctx.sites:
        if site.function is None:
            continue
        names = [p.name.value for p in site.function.params.params if p.name.value != "self"]
        shapes = {"x": [16, 4], "y": [16, 1]}
        args = {
            n: {"kind": "tensor", "shape": shapes.get(n, [16, 4]), "dtype": "float32"}
            for n in names
        }
        records.append(
            FunctionRecord(
                path=path,
                qualname=site.site.qualname,
                line=site.site.line,
                source_sha256=None,
                editable=True,
                params=[ParamInfo(n, "POSITIONAL_OR_KEYWORD") for n in names],
                calls=4,
                traces=2,
                signatures=[CallSignature(args, dict.fromkeys(names, "positional"), 4, 0, 2)],
                trace_events=[TraceEvent(call=0, signature=0), TraceEvent(call=0, signature=0)],
            )
        )
    plan = plan_fixes(
        Profile(functions=records, tensorflow_version="2.21.0"), {path: text}, InferOptions()
    )
    plan.functions = [dataclasses.replace(f, action="none") for f in plan.functions]
    result = engine.fix_text(text, path, plan=plan, rules=select_rules([]), unsafe_fixes=unsafe)
    return (
        result.new_text,
        [f.code for f in result.applied],
        [f.safety for f in result.applied],
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, source) in enumerate({**CASES, **UNSAFE}.items()):
            text = textwrap.dedent(source).lstrip()
            original = Path(tmp) / f"mb_{number}.py"
            original.write_text(text)
            new_text, applied, _ = fix(text, original.name)
            fixed = Path(tmp) / f"mb_{number}_fixed.py"
            fixed.write_text(new_text)
            row = {
                "case": name,
                "applied": applied,
                "new_text": new_text,
                "original": _run(original, f"mb_{number}"),
                "fixed": _run(fixed, f"mb_{number}_fixed"),
            }
            if name in UNSAFE:
                forced_text, forced_applied, safety = fix(text, original.name, unsafe=True)
                forced = Path(tmp) / f"mb_{number}_forced.py"
                forced.write_text(forced_text)
                row["forced_applied"] = list(zip(forced_applied, safety, strict=True))
                row["forced"] = _run(forced, f"mb_{number}_forced")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
