"""Measure what a Keras model built lazily inside a tf.function costs, and what building
it first gives, with real TensorFlow (issue 21, the ``model_build`` fix kind).

Each experiment runs in a fresh Python process (a seed or a built model in one must not
leak into the next) and prints one line of facts; the script prints them as a list.

    python scripts/measure_model_build.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap

PRELUDE = """
import random, sys
import numpy as np
import tensorflow as tf
import keras
def count(f):
    return f.experimental_get_tracing_count()
def total(t):
    return round(float(tf.reduce_sum(t)), 5)
class Sub(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = keras.layers.Dense(16, activation="relu")
        self.d2 = keras.layers.Dense(3)
    def call(self, x):
        return self.d2(self.d1(x))
class Scale(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="random_normal")
    def call(self, x):
        return x * self.w
def make(kind):
    if kind == "Sequential":
        return keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
    if kind == "Dense":
        return keras.layers.Dense(3)
    return Sub() if kind == "subclassed Model" else Scale()
x = np.random.default_rng(0).normal(size=(32, 8)).astype("float32")
"""

PREDICT = """
out = []
for kind in ("Sequential", "Dense", "subclassed Model", "Layer with add_weight"):
    row = []
    for how in ("lazy", "build", "zeros"):
        tf.keras.utils.set_random_seed(7)
        model = make(kind)
        if how == "build":
            model.build((None, 8))
        elif how == "zeros":
            model(tf.zeros((32, 8)))
        made = len(model.weights)
        f = tf.function(lambda t: model(t))
        results = [total(f(x)) for _ in range(3)]
        row.append(f"{how}: {made} variables before, {count(f)} trace(s), sum {results[0]}")
    out.append(f"{kind} in a predict step: " + "; ".join(row))
print(" | ".join(out))
"""

TRAIN = """
out = []
for how in ("lazy", "model built", "optimizer built", "model and optimizer built"):
    tf.keras.utils.set_random_seed(7)
    model = Sub()
    optimizer = keras.optimizers.Adam(0.01)
    if "model" in how:
        model(tf.zeros((32, 8)))
    if "optimizer" in how:
        try:
            optimizer.build(model.trainable_variables)
        except Exception as exc:
            out.append(f"{how}: optimizer.build fails: {type(exc).__name__}")
            continue
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    try:
        losses = [total(step(x, x[:, :3])) for _ in range(4)]
    except Exception as exc:
        out.append(f"{how}: the first step fails: {type(exc).__name__}")
        continue
    out.append(f"{how}: {count(step)} trace(s), last loss {losses[-1]}")
print("subclassed model + Adam train step: " + "; ".join(out))
"""

SEEDS = """
out = []
for kind in ("Sequential", "Layer with add_weight"):
    row = []
    for how in ("lazy", "built first"):
        tf.keras.utils.set_random_seed(1)
        model = make(kind)
        if how == "built first":
            model.build((None, 8))
        other = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
        picked = round(random.random(), 5)
        noise = round(float(tf.random.normal([])), 5)
        f = tf.function(lambda t: model(t))
        row.append(f"{how}: sum {total(f(x))}, other {total(other(x))}, "
                   f"random.random() {picked}, tf.random {noise}")
    out.append(f"{kind}, other objects made and random numbers drawn before the first call: "
               + "; ".join(row))
print(" | ".join(out))
"""

RUNTIME = """
what = sys.argv[1]
if what in ("Sequential made", "Sequential built"):
    model = make("Sequential")
    if what == "Sequential built":
        model.build((None, 8))
elif what == "subclassed Model made":
    model = make("subclassed Model")
elif what == "Adam made":
    keras.optimizers.Adam()
try:
    tf.config.threading.set_inter_op_parallelism_threads(2)
    print(f"{what}: tf.config threading set afterwards")
except RuntimeError:
    print(f"{what}: tf.config threading afterwards raises RuntimeError")
"""
RUNTIME_STEPS = ("Sequential made", "subclassed Model made", "Sequential built", "Adam made")

EXPERIMENTS = {"predict": PREDICT, "train": TRAIN, "seeds": SEEDS, "runtime": RUNTIME}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(EXPERIMENTS))
    args = parser.parse_args()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    for name in args.only or EXPERIMENTS:
        code = textwrap.dedent(PRELUDE) + textwrap.dedent(EXPERIMENTS[name])
        print(f"- {name}:")
        for argument in RUNTIME_STEPS if name == "runtime" else ("",):
            done = subprocess.run(
                [sys.executable, "-c", code, argument],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            lines = done.stdout.strip().splitlines()
            facts = lines[-1] if done.returncode == 0 and lines else done.stderr.strip()[-500:]
            for fact in facts.split(" | "):
                print(f"    {fact}")


if __name__ == "__main__":
    main()
