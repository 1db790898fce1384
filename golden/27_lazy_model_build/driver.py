"""Golden case 27: the quickstart-for-experts loop, whose subclassed model and optimizer
make their variables on the first call of the traced train step.

Two epochs over 256 random 12x12x1 images in batches of 32 (the same shape every step),
then a test pass over 64. Usage: ``python driver.py [MODULE.py]`` (default: model.py
beside this file). Prints each epoch's metrics and a digest of the weights, then
``TRACES {...}``; with ``GOLDEN_UNSEEN=1`` it then trains and tests on batches of other
sizes and on float64 NumPy images.
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


def weights_digest(module):
    return " ".join(f"{float(np.sum(np.abs(w))):.5f}" for w in module.model.get_weights())


def metrics(module):
    out = (
        f"loss {float(module.train_loss.result()):.5f} "
        f"accuracy {float(module.train_accuracy.result()):.4f} "
        f"test loss {float(module.test_loss.result()):.5f} "
        f"test accuracy {float(module.test_accuracy.result()):.4f}"
    )
    for metric in (
        module.train_loss,
        module.train_accuracy,
        module.test_loss,
        module.test_accuracy,
    ):
        metric.reset_state()
    return out


def unseen(module, x, y):
    """Calls outside the profile: batches of other sizes, float64 NumPy images."""
    for size in (5, 17):
        module.train_step(x[:size], y[:size])
        module.test_step(x[size : 2 * size], y[size : 2 * size])
        print(f"UNSEEN batch {size}: {metrics(module)}")
    module.train_step(x[:8].astype("float64"), y[:8])
    print(f"UNSEEN float64 images: {metrics(module)}")
    print(f"UNSEEN weights {weights_digest(module)}")


def main():
    tf.keras.utils.set_random_seed(27)  # the model's initial weights, in the module
    module = load_module()
    rng = np.random.default_rng(27)
    x = rng.uniform(size=(320, 12, 12, 1)).astype("float32")
    y = (x[:, :6, :6, 0].mean(axis=(1, 2)) * 20).astype("int64") % 10
    train_x, train_y, test_x, test_y = x[:256], y[:256], x[256:], y[256:]
    for epoch in range(2):
        for start in range(0, len(train_x), 32):
            module.train_step(train_x[start : start + 32], train_y[start : start + 32])
        for start in range(0, len(test_x), 32):
            module.test_step(test_x[start : start + 32], test_y[start : start + 32])
        print(f"epoch {epoch}: {metrics(module)}")
    print(f"weights {weights_digest(module)}")
    print(f"optimizer iterations {int(module.optimizer.iterations.numpy())}")
    traces = {
        "test_step": module.test_step.experimental_get_tracing_count(),
        "train_step": module.train_step.experimental_get_tracing_count(),
    }
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(module, x, y)


if __name__ == "__main__":
    main()
