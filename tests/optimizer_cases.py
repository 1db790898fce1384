"""Training loops whose optimizer makes its variables in the first traced step, run before
and after ``fix`` inserts ``optimizer.build(...)``.

Run as a script (one TensorFlow start for every case): each module is fixed the way
``autosig fix --profile`` does for a profile that saw the step traced twice on its first
call (TensorFlow 2.21), then the original and the fixed module train for a few steps
from the same seed; one JSON line per case gives the losses, every weight and slot
variable after training, the optimizer's iterations and the step's trace count. The
test compares them; nothing here trusts autosig.
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

SEQUENTIAL_NO_INPUT = """
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

    def run(x, y, steps):
        return [train_step(x, y) for _ in range(steps)], [train_step], model, optimizer
"""

CASES: dict[str, str] = {
    "functional_adam_and_metric": """
        import tensorflow as tf

        inputs = tf.keras.Input(shape=(4,))
        hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
        model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(hidden))
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
        metric = tf.keras.metrics.MeanAbsoluteError()

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                prediction = model(x, training=True)
                loss = tf.reduce_mean((prediction - y) ** 2)
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            metric.update_state(y, prediction)
            return loss

        def run(x, y, steps):
            return [train_step(x, y) for _ in range(steps)], [train_step], model, optimizer
    """,
    "sequential_made_after_the_optimizer": """
        import tensorflow as tf

        optimizer = tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True)
        model = tf.keras.Sequential(
            [tf.keras.Input((4,)), tf.keras.layers.Dense(6, activation="tanh"), tf.keras.layers.Dense(1)]
        )

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        def run(x, y, steps):
            return [train_step(x, y) for _ in range(steps)], [train_step], model, optimizer
    """,
    "built_by_a_statement": SEQUENTIAL_NO_INPUT.replace(
        "    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9)\n",
        "    optimizer = tf.keras.optimizers.RMSprop(learning_rate=0.01)\n"
        "    model.build((None, 4))\n",
    ),
    "trainer_class_with_adamw": """
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.model = tf.keras.Sequential(
                    [tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)]
                )
                self.optimizer = tf.keras.optimizers.AdamW(learning_rate=0.02, weight_decay=0.01)

            @tf.function
            def step(self, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((self.model(x) - y) ** 2)
                variables = self.model.trainable_variables
                grads = tape.gradient(loss, variables)
                self.optimizer.apply_gradients(zip(grads, variables))
                return loss

        def run(x, y, steps):
            trainer = Trainer()
            losses = [trainer.step(x, y) for _ in range(steps)]
            return losses, [trainer.step], trainer.model, trainer.optimizer
    """,
    "two_models_two_optimizers": """
        import tensorflow as tf

        inputs = tf.keras.Input(shape=(4,))
        generator = tf.keras.Model(inputs, tf.keras.layers.Dense(4)(inputs))
        critic = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
        g_opt = tf.keras.optimizers.Nadam(1e-2)
        d_opt = tf.keras.optimizers.Adam(1e-2, beta_1=0.5)

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
                fake = generator(x)
                d_loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(x))
                g_loss = -tf.reduce_mean(critic(fake)) + tf.reduce_mean((fake - x) ** 2)
            d_grads = d_tape.gradient(d_loss, critic.trainable_variables)
            g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
            d_opt.apply_gradients(zip(d_grads, critic.trainable_variables))
            g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
            return g_loss + d_loss

        class Both:
            variables = property(lambda self: g_opt.variables + d_opt.variables)

        def run(x, y, steps):
            losses = [train_step(x, y) for _ in range(steps)]
            return losses, [train_step], [generator, critic], Both()
    """,
    "nested_step_in_main_with_apply": """
        import tensorflow as tf

        def main(x, y, steps):
            inputs = tf.keras.Input(shape=(4,))
            model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(2)(inputs))
            optimizer = tf.keras.optimizers.Adagrad(learning_rate=0.1)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x)[:, :1] - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply(grads, model.trainable_variables)
                return loss

            return [train_step(x, y) for _ in range(steps)], [train_step], model, optimizer

        def run(x, y, steps):
            return main(x, y, steps)
    """,
    "lion_input_shape": """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,)), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.Lion(learning_rate=1e-3)

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        def run(x, y, steps):
            return [train_step(x, y) for _ in range(steps)], [train_step], model, optimizer
    """,
}

REFUSED = {"sequential_without_input": SEQUENTIAL_NO_INPUT}
"""Cases fix leaves alone; the script also runs them with the build forced in, to show
why (the model has no variables yet when the optimizer is made)."""


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _train(path: Path, name: str, steps: int = 6) -> dict:
    import numpy as np
    import tensorflow as tf

    tf.keras.utils.set_random_seed(7)
    try:
        module = _load(path, name)
        rng = np.random.default_rng(7)
        x = rng.normal(size=(16, 4)).astype("float32")
        y = rng.normal(size=(16, 1)).astype("float32")
        losses, steps_fns, models, optimizer = module.run(x, y, steps)
    except Exception as exc:  # noqa: BLE001 - the comparison is the test
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
    models = models if isinstance(models, list) else [models]
    return {
        "losses": [float(v) for v in losses],
        "weights": [w.numpy().tolist() for m in models for w in m.trainable_variables],
        "slots": [v.numpy().tolist() for v in optimizer.variables],
        "traces": sum(f.experimental_get_tracing_count() for f in steps_fns),
    }


def _fix(text: str, path: str) -> tuple[str, list[str]]:
    """Fix ``text`` as ``fix --profile`` does for a step traced twice on its first call."""
    from autosig.infer.observations import InferOptions
    from autosig.infer.planning import plan_fixes
    from autosig.profile.format import CallSignature, FunctionRecord, Profile, TraceEvent
    from autosig.rewrite import engine
    from autosig.rules.context import RuleContext
    from autosig.rules.registry import select_rules

    ctx = RuleContext.from_text(text, path)
    records = [
        FunctionRecord(
            path=path,
            qualname=site.site.qualname,
            line=site.site.line,
            source_sha256=None,
            editable=True,
            calls=6,
            traces=2,
            signatures=[CallSignature({}, {})],
            trace_events=[TraceEvent(call=0, signature=0), TraceEvent(call=0, signature=0)],
        )
        for site in ctx.sites
        if site.function is not None
    ]
    plan = plan_fixes(
        Profile(functions=records, tensorflow_version="2.21.0"), {path: text}, InferOptions()
    )
    plan.functions = [dataclasses.replace(f, action="none") for f in plan.functions]
    result = engine.fix_text(text, path, plan=plan, rules=select_rules([]), unsafe_fixes=False)
    return result.new_text, [f.code for f in result.applied]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, source) in enumerate({**CASES, **REFUSED}.items()):
            text = textwrap.dedent(source).lstrip()
            original = Path(tmp) / f"opt_{number}.py"
            original.write_text(text)
            new_text, applied = _fix(text, original.name)
            fixed = Path(tmp) / f"opt_{number}_fixed.py"
            fixed.write_text(new_text)
            row = {
                "case": name,
                "applied": applied,
                "new_text": new_text,
                "original": _train(original, f"opt_{number}"),
                "fixed": _train(fixed, f"opt_{number}_fixed"),
            }
            if name in REFUSED:
                forced = Path(tmp) / f"opt_{number}_forced.py"
                forced.write_text(
                    text.replace(
                        "\n\n@tf.function",
                        "\noptimizer.build(model.trainable_variables)\n\n@tf.function",
                        1,
                    )
                )
                row["forced"] = _train(forced, f"opt_{number}_forced")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
