"""Measure the "guarded relaxed trace" against ``input_signature`` with real TensorFlow.

A guarded relaxed trace is one ``f.get_concrete_function(<relaxed specs>)`` call made
before the program's own calls: calls that fit the specs reuse that trace, calls that do
not trace anew exactly as the original would. Issue 21 (stage B) weighs it against an
``input_signature``, which converts or rejects what does not fit. Each experiment runs in
a fresh Python process (a trace, a seed or a device setting in one must not leak into
the next; those that compare modes, once per mode) and prints one line of facts; the
script prints them as a list.

    python scripts/measure_guarded_trace.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

PRELUDE = """
import os
import time
import numpy as np
import tensorflow as tf
import keras
S = tf.TensorSpec
def count(f):
    return f.experimental_get_tracing_count()
MODE = os.environ.get("MODE", "-")
"""

EXPERIMENTS: dict[str, str] = {
    "fits_and_misfits": """
@tf.function
def f(x, lr):
    return tf.reduce_sum(x) * lr
f.get_concrete_function(S([None, None], tf.float32), S([], tf.float32))
out = []
for b in (3, 5, 7):
    f(tf.ones([b, 4]), tf.constant(0.5))
out.append(f"float32 tensors of 3 batch sizes: {count(f)} trace (the seeding one)")
f(np.ones([2, 4], np.float32), tf.constant(0.5))
out.append(f"float32 NumPy: {count(f)}")
r = f(np.ones([2, 4]), tf.constant(0.5, tf.float64))
out.append(f"float64 NumPy: {count(f)} traces, result {r.dtype.name} (no cast)")
f(tf.ones([2, 4], tf.float64), tf.constant(0.5, tf.float64))
out.append(f"float64 tensor: {count(f)}")
f(tf.ones([2, 4]), 0.5); f(tf.ones([2, 4]), 0.25)
out.append(f"two Python float lr values: {count(f)} (one trace per value, as unfixed)")
f(tf.ones([4]), tf.constant(0.5))
out.append(f"rank 1: {count(f)}")
print("; ".join(out))
""",
    "input_signature": """
@tf.function(input_signature=[S([None, None], tf.float32), S([], tf.float32)])
def g(x, lr):
    return tf.reduce_sum(x) * lr
for b in (3, 5, 7):
    g(tf.ones([b, 4]), tf.constant(0.5))
r = g(np.ones([2, 4]), 0.5)
out = [f"3 batch sizes, a float64 NumPy array and a Python float: {count(g)} trace; the NumPy array cast to {r.dtype.name}"]
for what, args in (("float64 tensor", (tf.ones([2, 4], tf.float64), tf.constant(0.5))), ("rank 1", (tf.ones([4]), tf.constant(0.5)))):
    try:
        g(*args)
        out.append(f"{what}: accepted")
    except Exception as e:
        out.append(f"{what}: {type(e).__name__}")
print("; ".join(out))
""",
    "seeding_cost": """
def make():
    model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(4)])
    model.build((None, 8))
    opt = keras.optimizers.Adam(1e-2)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    return step
rng = np.random.default_rng(0)
batches = [(rng.normal(size=(b, 8)).astype("float32"), rng.normal(size=(b, 4)).astype("float32")) for b in (8, 5, 8, 3, 7)]
res = {}
for seeded in (False, True):
    keras.utils.set_random_seed(1)
    step = make()
    t = time.perf_counter()
    if seeded:
        step.get_concrete_function(S([None, 8]), S([None, 4]))
    seed_s = time.perf_counter() - t
    t = time.perf_counter()
    losses = [round(float(step(tf.constant(x), tf.constant(y))), 6) for x, y in batches]
    res[seeded] = (count(step), losses, seed_s, time.perf_counter() - t)
print(f"Keras train step, unbuilt Adam, batches 8,5,8,3,7: plain {res[False][0]} traces, "
      f"{res[False][3]:.2f} s; seeded {res[True][0]} traces (the seeding trace creates the "
      f"slots, TensorFlow traces once more), seeding {res[True][2]:.2f} s + calls "
      f"{res[True][3]:.2f} s; losses identical: {res[False][1] == res[True][1]}")
""",
    "weights_built_by_the_seeding_trace": """
# a tf.Module that builds its weights in its first call (tf.random.normal, no op seed)
class Lazy(tf.Module):
    def __init__(self):
        self.w = None
    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.random.normal([x.shape[-1], 2]))
        return tf.reduce_sum(x @ self.w)
lazy = Lazy()
if MODE == "seeded at import, before the program's tf.random.set_seed":
    lazy.__call__.get_concrete_function(S([None, 3]))
tf.random.set_seed(3)
if MODE == "seeded after tf.random.set_seed":
    lazy.__call__.get_concrete_function(S([None, 3]))
print(f"{MODE}: outputs {[round(float(lazy(tf.ones([b, 3]))), 4) for b in (2, 5)]}, {count(lazy.__call__)} traces")
""",
    "random_ops_and_the_global_seed": """
@tf.function
def noisy(x):
    return x + tf.random.normal(tf.shape(x))
if MODE == "seeded at import, before tf.random.set_seed":
    noisy.get_concrete_function(S([None]))
tf.random.set_seed(0)
if MODE == "seeded after tf.random.set_seed":
    noisy.get_concrete_function(S([None]))
draws = [np.round(noisy(tf.zeros([n])).numpy()[:2], 3).tolist() for n in (2, 3, 2)]
print(f"{MODE}: calls of size 2, 3, 2 draw {draws}")
""",
    "device_config_after_seeding": """
@tf.function
def f(x):
    return x * 2.0
f.get_concrete_function(S([None]))
try:
    tf.config.set_visible_devices(tf.config.list_physical_devices("CPU"))
    tf.config.threading.set_inter_op_parallelism_threads(1)
    print("tf.config device and thread settings after an import-time seeding trace: accepted")
except RuntimeError as e:
    print(f"tf.config settings after an import-time seeding trace: RuntimeError: {str(e)[:90]}")
""",
    "globals_not_yet_defined": """
@tf.function
def step(x):
    return model(x)
try:
    step.get_concrete_function(S([None, 3]))  # right after the def, at import
    seeded = "built"
except Exception as e:
    seeded = f"{type(e).__name__}: {str(e).splitlines()[-1][:60]}"
model = keras.Sequential([keras.layers.Dense(2)])
model.build((None, 3))
for n in (2, 3):
    step(tf.ones([n, 3]))
print(f"seeding right after the def, before the model it calls exists: {seeded}; afterwards {count(step)} traces for 2 sizes (nothing was seeded)")
""",
    "methods": """
class Mod(tf.Module):
    def __init__(self, seed=False):
        self.w = tf.Variable(tf.ones([4, 2]))
        if seed:
            self.__call__.get_concrete_function(S([None, 4]))
    @tf.function
    def __call__(self, x):
        return x @ self.w * self.scale if hasattr(self, "scale") else x @ self.w
class Scaled(Mod):
    def __init__(self):
        super().__init__(seed=True)
        self.scale = 2.0  # set after the base class seeded
a, b, c = Mod(seed=True), Mod(seed=True), Mod()
for m in (a, b, c):
    for n in (2, 3, 5):
        m(tf.ones([n, 4]))
s = Scaled()
before = count(s.__call__)
r = s(tf.ones([2, 4]))
print(f"seeding through each instance in __init__: {count(a.__call__)} and {count(b.__call__)} traces for 3 sizes, unseeded {count(c.__call__)}; a subclass that sets an attribute after super().__init__(): its seeded trace ran without it ({before} trace), later calls reuse it, result {float(tf.reduce_sum(r)):.1f} where the original gives 32.0")
""",
    "lazy_model_build": """
class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = keras.layers.Dense(16, activation="relu")
        self.drop = keras.layers.Dropout(0.5)
        self.d2 = keras.layers.Dense(4)
    def call(self, x, training=False):
        return self.d2(self.drop(self.d1(x), training=training))
def run(mode):
    keras.utils.set_random_seed(5)
    net = Net()
    opt = keras.optimizers.Adam(1e-2)
    built = None
    if mode == "model.build":
        net.build((None, 8))
        built = len(net.trainable_variables)
    elif mode == "one eager call + optimizer.build":
        net(tf.zeros([1, 8]))
        opt.build(net.trainable_variables)
        built = len(net.trainable_variables)
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((net(x, training=True) - y) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), net.trainable_variables))
        return loss
    rng = np.random.default_rng(0)
    losses = [round(float(step(rng.normal(size=(8, 8)).astype("float32"), rng.normal(size=(8, 4)).astype("float32"))), 6) for _ in range(4)]
    return count(step), losses, built
plain = run("plain")
build = run("model.build")
eager = run("one eager call + optimizer.build")
print(f"subclassed Keras 3 model with dropout: plain {plain[0]} traces; model.build((None, 8)) makes {build[2]} variables ({build[0]} traces); one eager call makes {eager[2]}, then optimizer.build: {eager[0]} trace, losses identical {eager[1] == plain[1]}")
""",
    "seeding_a_lazily_built_model": """
class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = keras.layers.Dense(3)
    def call(self, x):
        return self.d1(x)
def run(spec):
    keras.utils.set_random_seed(2)
    net = Net()
    @tf.function
    def f(x):
        return tf.reduce_sum(net(x))
    seeded = "-"
    if spec is not None:
        try:
            f.get_concrete_function(spec)
            seeded = "built"
        except Exception as e:
            seeded = type(e).__name__
    try:
        outs = [round(float(f(tf.ones([n, 4]))), 5) for n in (2, 3, 5)]
    except Exception as e:
        outs = f"calls raise {type(e).__name__}: {str(e).splitlines()[0][:60]}"
    return seeded, count(f), outs, [tuple(v.shape) for v in net.trainable_variables]
plain = run(None)
free_width = run(S([None, None]))
kept_width = run(S([None, 4]))
print(f"a subclassed Keras model built on its first call, in a tf.function: plain {plain[1]} traces, outputs {plain[2]}; seeded with [None, None]: the seeding call raises {free_width[0]}, then {free_width[2] if isinstance(free_width[2], str) else 'outputs equal ' + str(free_width[2] == plain[2])}; seeded with [None, 4]: {kept_width[0]}, {kept_width[1]} traces, variables {kept_width[3]}, outputs equal {kept_width[2] == plain[2]}")
""",
    "failed_seeding_changes_nothing": """
@tf.function
def f(x):
    ta = tf.TensorArray(tf.float32, size=x.shape[0])
    for i in tf.range(tf.shape(x)[0]):
        ta = ta.write(i, tf.reduce_sum(x[i]))
    return ta.stack()
try:
    f.get_concrete_function(S([None, 3]))
    seeded = "built"
except Exception as e:
    seeded = type(e).__name__
for n in (2, 3):
    f(tf.ones([n, 3]))
print(f"a relaxed trace the code cannot build (TensorArray(size=x.shape[0])): the seeding call raises {seeded}; afterwards {count(f)} traces for 2 sizes, as unfixed (a guard is try/except around the seeding call)")
""",
}


MODES = {
    "weights_built_by_the_seeding_trace": [
        "plain",
        "seeded after tf.random.set_seed",
        "seeded at import, before the program's tf.random.set_seed",
    ],
    "random_ops_and_the_global_seed": [
        "plain",
        "seeded after tf.random.set_seed",
        "seeded at import, before tf.random.set_seed",
    ],
}
"""Experiments run once per mode, each in a fresh process (a seed set in one run must not
reach the next)."""


def run(name: str) -> str:
    """Run one experiment from a file (AutoGraph needs the source) in fresh processes."""
    lines = []
    with tempfile.TemporaryDirectory(prefix="autosig-guarded-") as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(PRELUDE + textwrap.dedent(EXPERIMENTS[name]))
        for mode in MODES.get(name, ["-"]):
            env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "MODE": mode}
            done = subprocess.run(
                [sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=900
            )
            out = [line for line in done.stdout.splitlines() if line.strip()]
            if done.returncode != 0 or not out:
                err = done.stderr.strip().splitlines()
                lines.append(f"FAILED: {err[-1] if err else done.returncode}")
            else:
                lines.append(out[-1])
    return " | ".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    import tensorflow as tf  # noqa: F401 - only for the version line

    print(f"TensorFlow {tf.__version__}")
    for name in args.only or EXPERIMENTS:
        print(f"- {name}: {run(name)}")


if __name__ == "__main__":
    main()
