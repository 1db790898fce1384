"""Golden case 21: a Python int epoch passed to the training step every call, used
only by the caller's logging (the step itself never reads it).

Six epochs of two batches. Usage: ``python driver.py [MODULE.py]`` (default: model.py
beside this file). Prints per-epoch metrics, then ``TRACES {...}``.
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


def batch(rng, size):
    """Features and the index of their largest of the first three columns."""
    images = rng.normal(size=(size, 6)).astype("float32")
    return images, np.argmax(images[:, :3], axis=1).astype("int64")


def run_epoch(model, rng, epoch, sizes):
    """One epoch: the step on each batch, then the epoch's metrics (logged here)."""
    model.train_loss.reset_state()
    model.train_accuracy.reset_state()
    for size in sizes:
        model.train_step(*batch(rng, size), tf.constant(epoch))
    loss, accuracy = float(model.train_loss.result()), float(model.train_accuracy.result())
    return f"epoch {epoch}: loss {loss:.6f} accuracy {accuracy:.4f}"


def main():
    model = load_module()
    rng = np.random.default_rng(21)
    for epoch in range(6):
        print(run_epoch(model, rng, epoch, (32, 32)))
    traces = {"train_step": model.train_step.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        for epoch in (1000, 123456):  # far later epochs, and a batch of 5
            print("UNSEEN " + run_epoch(model, rng, epoch, (32, 5)))


if __name__ == "__main__":
    main()
