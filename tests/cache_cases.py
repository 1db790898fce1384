"""Methods that create a tf.function on every call, run before and after AS106's cache fix.

Run as a script (one TensorFlow start for every case): for each case it fixes the
module statically (``autosig fix``, with or without ``--unsafe-fixes``) in a project of
its own, with the calls as a script beside it, then runs the
original and the fixed module through the same calls (several instances, several
inputs, attributes set between calls where the case says so) and prints one JSON line
per case: the results of both, the traces each made (over every tf.function object
created), and what the fix applied. The test compares them; nothing here trusts autosig.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path

CASES: dict[str, tuple[str, str, bool]] = {
    # name: (module source, calls (m is the module, out collects results), --unsafe-fixes)
    "nested_def_reads_self": (
        """
        import numpy as np
        import tensorflow as tf

        class Predictor:
            def __init__(self, weights, offset):
                self.w = tf.Variable(weights)
                self.offset = np.asarray(offset, dtype="float32")

            def predict(self, x):
                # the step is made again on every call
                @tf.function
                def step(x):
                    return tf.nn.relu(x @ self.w + self.offset)

                return step(x)
        """,
        """
        a = m.Predictor(np.eye(3, dtype="float32"), [0.5, -1.0, 0.0])
        b = m.Predictor(2 * np.ones((3, 3), dtype="float32"), [0.0, 0.0, 1.0])
        for size in (2, 2, 5, 2):
            x = np.arange(3 * size, dtype="float32").reshape(size, 3) / 7
            out += [a.predict(x), b.predict(x)]
        a.w.assign(a.w * 3)  # a variable's value is read when the graph runs
        out.append(a.predict(np.ones((2, 3), dtype="float32")))
        """,
        False,
    ),
    "bound_method_called_at_once": (
        """
        import tensorflow as tf

        class Clipper:
            LIMIT_SCALE = 2.0

            def __init__(self, limit):
                self.limit = limit

            def _clip(self, x):
                return tf.clip_by_value(x, -self.limit, self.limit) * self._scale()

            def _scale(self):
                return self.LIMIT_SCALE

            def __call__(self, x):
                return tf.function(self._clip, jit_compile=True)(x)
        """,
        """
        clippers = [m.Clipper(0.5), m.Clipper(1.5), m.Clipper(3.0)]
        for x in ([-2.0, 0.25, 4.0], [1.0, -1.0, 0.0]):
            out += [c(np.array(x, dtype="float32")) for c in clippers]
        """,
        False,
    ),
    "assigned_then_called_twice": (
        """
        import tensorflow as tf

        def normalise(x):
            return x / tf.reduce_max(tf.abs(x))

        class Pipeline:
            def __init__(self, power):
                self.power = power

            def run(self, x):
                fn = tf.function(lambda t: normalise(t) ** self.power)
                return fn(x) + fn(2 * x)
        """,
        """
        for power in (1, 2, 3):
            p = m.Pipeline(power)
            out += [p.run(np.array([1.0, -3.0, 2.0], dtype="float32")) for _ in range(3)]
        """,
        False,
    ),
    "closed_over_locals_become_arguments": (
        """
        import tensorflow as tf

        class Scaler:
            def __init__(self, base):
                self.base = base

            def scaled(self, x, factor, shift=0.0):
                offset = shift * 2

                @tf.function
                def step(x):
                    return x * self.base * factor + offset

                return step(x)
        """,
        """
        s, t = m.Scaler(1.5), m.Scaler(-1.0)
        for factor, shift in ((2.0, 0.0), (0.5, 1.0), (2.0, 0.0), (3, 1)):
            x = np.array([1.0, 2.0], dtype="float32")
            out += [s.scaled(x, factor, shift), t.scaled(x, factor, shift=shift)]
        """,
        True,
    ),
    "subclass_overrides_and_calls_super": (
        """
        import tensorflow as tf

        class Base:
            def __init__(self, gain):
                self.gain = gain

            def predict(self, x):
                @tf.function
                def step(x):
                    return x * self.gain

                return step(x)

        class Shifted(Base):
            def __init__(self, gain, shift):
                super().__init__(gain)
                self.shift = shift

            def predict(self, x):
                @tf.function
                def step(x):
                    return x + self.shift

                return step(super().predict(x))
        """,
        """
        objs = [m.Base(2.0), m.Shifted(3.0, 1.0), m.Shifted(-1.0, 0.5)]
        for x in ([1.0, 2.0], [0.0, -4.0]):
            out += [o.predict(np.array(x, dtype="float32")) for o in objs]
        """,
        True,
    ),
    "optimizer_inside_the_cached_step": (
        """
        import tensorflow as tf

        class Trainer:
            def __init__(self, units):
                self.w = tf.Variable(tf.ones([3, units]) * 0.1)
                self.optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.5)

            def train(self, x, y):
                @tf.function
                def step(x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((x @ self.w - y) ** 2)
                    grads = tape.gradient(loss, [self.w])
                    self.optimizer.apply_gradients(zip(grads, [self.w]))
                    return loss

                return step(x, y)
        """,
        """
        trainers = [m.Trainer(2), m.Trainer(2)]
        x = np.arange(12, dtype="float32").reshape(4, 3) / 10
        y = np.ones((4, 2), dtype="float32")
        for _ in range(4):
            out += [t.train(x, y) for t in trainers]
        out += [t.w for t in trainers]
        """,
        False,
    ),
    "attribute_changed_between_calls": (
        # the fix is unsafe here and the results show why: the cached trace keeps the
        # first threshold (the test expects the difference)
        """
        import tensorflow as tf

        class Detector:
            def __init__(self, threshold):
                self.threshold = threshold

            def set_threshold(self, value):
                self.threshold = value

            def detect(self, scores):
                @tf.function
                def step(scores):
                    return tf.cast(scores > self.threshold, tf.int32)

                return step(scores)
        """,
        """
        d = m.Detector(0.5)
        scores = np.array([0.2, 0.6, 0.9], dtype="float32")
        out.append(d.detect(scores))
        d.set_threshold(0.8)
        out.append(d.detect(scores))
        """,
        True,
    ),
    "attribute_changed_by_another_file": (
        # the same, with the change made by the script, not by the class: unsafe (the
        # project's other files are scanned), and the results show why
        """
        import tensorflow as tf

        class Detector:
            def __init__(self, threshold):
                self.threshold = threshold

            def detect(self, scores):
                @tf.function
                def step(scores):
                    return tf.cast(scores > self.threshold, tf.int32)

                return step(scores)
        """,
        """
        d = m.Detector(0.5)
        scores = np.array([0.2, 0.6, 0.9], dtype="float32")
        out.append(d.detect(scores))
        d.threshold = 0.8
        out.append(d.detect(scores))
        """,
        True,
    ),
    "config_dict_changed_through_an_alias": (
        # self.config is the module's HPARAMS, which the script changes: unsafe (issue
        # 22: the alias is followed to the module dict), and the results show why
        """
        import tensorflow as tf

        HPARAMS = {"scale": 1.0}

        class Trainer:
            def __init__(self):
                self.config = HPARAMS

            def step(self, x):
                @tf.function
                def scaled(v):
                    return v * self.config["scale"]

                return scaled(x)
        """,
        """
        t = m.Trainer()
        out.append(t.step(np.float32(2.0)))
        m.HPARAMS["scale"] = 3.0
        out.append(t.step(np.float32(2.0)))
        """,
        True,
    ),
    "settings_attribute_changed_by_the_script": (
        # self.settings.threshold, set by the script on the settings object it shares
        """
        import tensorflow as tf

        class Settings:
            def __init__(self):
                self.threshold = 0.5

        class Detector:
            def __init__(self, settings):
                self.settings = settings

            def detect(self, scores):
                @tf.function
                def step(scores):
                    return tf.cast(scores > self.settings.threshold, tf.int32)

                return step(scores)
        """,
        """
        settings = m.Settings()
        d = m.Detector(settings)
        scores = np.array([0.2, 0.6, 0.9], dtype="float32")
        out.append(d.detect(scores))
        settings.threshold = 0.8
        out.append(d.detect(scores))
        """,
        True,
    ),
    "instance_copied": (
        # unsafe too, and why: a shallow copy shares the cached function, which is bound
        # to the original instance (the test expects the difference)
        """
        import copy

        import tensorflow as tf

        class Gain:
            def __init__(self, k):
                self.k = k

            def scaled(self, other_k):
                twin = copy.copy(self)
                twin.k = other_k
                return twin

            def apply(self, x):
                @tf.function
                def step(x):
                    return x * self.k

                return step(x)
        """,
        """
        g = m.Gain(2.0)
        out.append(g.apply(np.float32(1.0)))
        out.append(g.scaled(5.0).apply(np.float32(1.0)))
        """,
        True,
    ),
}


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _plain(value):
    import numpy as np

    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return np.round(np.asarray(value, dtype="float64"), 5).tolist()
    return value


def _run_calls(module, calls: str) -> dict:
    """Run ``calls`` against ``module``: results, and traces over every new tf.function."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    created = []
    original_init = polymorphic_function.Function.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        created.append(self)

    polymorphic_function.Function.__init__ = init
    tf.keras.utils.set_random_seed(0)
    out: list = []
    try:
        exec(textwrap.dedent(calls), {"m": module, "np": np, "tf": tf, "out": out})
    except Exception as exc:  # noqa: BLE001 - the comparison is the test
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        polymorphic_function.Function.__init__ = original_init
    traces = sum(f.experimental_get_tracing_count() for f in created)
    return {"values": [_plain(v) for v in out], "traces": traces, "functions": len(created)}


def main() -> None:
    from autosig.rewrite import engine
    from autosig.rules.registry import select_rules

    rules = select_rules(["AS106"])
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, (source, calls, unsafe)) in enumerate(CASES.items()):
            text = textwrap.dedent(source).lstrip()
            # each case its own project: the module, and the calls as the script beside it
            project = Path(tmp) / f"case_{number}"
            project.mkdir()
            (project / "pyproject.toml").write_text("")
            (project / "driver.py").write_text(textwrap.dedent(calls))
            path = project / "model.py"
            path.write_text(text)
            result = engine.fix_text(text, str(path), plan=None, rules=rules, unsafe_fixes=unsafe)
            fixed_path = Path(tmp) / f"case_{number}_fixed.py"
            fixed_path.write_text(result.new_text)
            row = {
                "case": name,
                "applied": [f"{f.code}:{f.safety}" for f in result.applied],
                "new_text": result.new_text,
                "original": _run_calls(_load(path, f"case_{number}"), calls),
                "fixed": _run_calls(_load(fixed_path, f"case_{number}_fixed"), calls),
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
