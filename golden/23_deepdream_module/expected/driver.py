"""Golden case 23: the DeepDream tutorial's module, called per octave.

Twelve calls: the image grows by octave (height and width change), ``steps`` and
``step_size`` are Python numbers. Usage: ``python driver.py [MODULE.py]``. Prints
results, then ``TRACES {...}``; with ``GOLDEN_UNSEEN=1`` also other sizes, another
model and larger step counts.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf


def load_module():
    """Import the module under test as ``model``: model.py, or the file in argv[1]."""
    if len(sys.argv) < 2:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import model

        return model
    spec = importlib.util.spec_from_file_location("model", Path(sys.argv[1]).resolve())
    module = importlib.util.module_from_spec(spec)
    sys.modules["model"] = module
    spec.loader.exec_module(module)
    return module


def feature_model(seed):
    """A small convolutional feature extractor with fixed weights (3 input channels)."""
    tf.keras.utils.set_random_seed(seed)
    inputs = tf.keras.Input(shape=(None, None, 3))
    first = tf.keras.layers.Conv2D(4, 3, activation="relu")(inputs)
    second = tf.keras.layers.Conv2D(6, 3, activation="relu")(first)
    return tf.keras.Model(inputs, [first, second])


def report(label, loss, img):
    print(f"{label}: {tuple(img.shape)} loss {float(loss):.5f} mean {float(np.mean(img)):.5f}")


def main():
    model = load_module()
    dream = model.DeepDream(feature_model(1))
    try:  # autosig: guarded relaxed trace: other calls trace as before
        dream.__call__.get_concrete_function(
            tf.TensorSpec(shape=[None, None, 3], dtype=tf.float32),
            tf.TensorSpec(shape=[], dtype=tf.int32),
            tf.TensorSpec(shape=[], dtype=tf.float32),
        )
    except Exception:  # specs the code cannot trace: nothing seeded
        pass
    rng = np.random.default_rng(3)
    base = rng.uniform(-1, 1, size=(12, 14, 3)).astype("float32")
    for call in range(12):
        scale = 1.3 ** (call % 6)
        shape = (int(12 * scale), int(14 * scale))
        img = tf.image.resize(base, shape).numpy()
        steps = 1 + call % 3
        step_size = round(0.01 + 0.005 * (call % 4), 3)
        loss, img = dream(img, tf.constant(steps), tf.constant(step_size, tf.float32))
        report(f"call {call}", loss, img)
    traces = {"DeepDream.__call__": dream.__call__.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        other = model.DeepDream(feature_model(2))
        for label, shape, steps, step_size in (
            ("small", (5, 5), 2, 0.02),
            ("wide", (9, 40), 7, 0.015),
        ):
            img = rng.uniform(-1, 1, size=shape + (3,)).astype("float32")
            report(f"UNSEEN {label} first", *dream(img, steps, step_size))
            report(f"UNSEEN {label} other", *other(img, steps, step_size))


if __name__ == "__main__":
    main()
