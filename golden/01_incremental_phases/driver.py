"""Golden case 01: incremental training in phases.

Each phase batches the same data with another tf.data batch size (the last batch is
partial), may swap the loss object, and assigns a new value to the learning-rate
tf.Variable. Usage: ``python driver.py [MODULE.py]`` (default: model.py beside this file).
Prints per-phase losses, then ``TRACES {...}``: each tf.function's trace count.
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


def unseen(model, x, y, mse):
    """Calls outside the profile: other batch sizes."""
    print(f"UNSEEN evaluate batch 7: {float(model.evaluate(x[:7], y[:7])):.6f}")
    print(f"UNSEEN evaluate batch 100: {float(model.evaluate(x, y)):.6f}")
    loss = model.train_step(x[:5], y[:5], mse, tf.Variable(0.01))
    print(f"UNSEEN train_step batch 5: {float(loss):.6f}")


def main():
    model = load_module()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(100, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]]) + 0.25).astype("float32")
    learning_rate = tf.Variable(0.1, name="learning_rate")
    mse = tf.keras.losses.MeanSquaredError()
    huber = tf.keras.losses.Huber()
    phases = [(32, mse, 0.1), (64, huber, 0.05), (16, huber, 0.02)]
    for phase, (batch_size, loss_fn, rate) in enumerate(phases):
        learning_rate.assign(rate)
        batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)
        for xb, yb in batches:
            loss = model.train_step(xb, yb, loss_fn, learning_rate)
        held_out = model.evaluate(x[: 10 + 20 * phase], y[: 10 + 20 * phase])
        print(f"phase {phase}: loss {float(loss):.6f} eval {float(held_out):.6f}")
    traces = {
        "train_step": model.train_step.experimental_get_tracing_count(),
        "evaluate": model.evaluate.experimental_get_tracing_count(),
    }
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, x, y, mse)


if __name__ == "__main__":
    main()
