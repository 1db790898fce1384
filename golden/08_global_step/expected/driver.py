"""Golden case 08: a Python int global step passed to the step function each iteration,
used for a learning-rate schedule and for tf.summary.

Twenty steps with summaries written to a temporary directory. Usage: ``python
driver.py [MODULE.py]`` (default: model.py beside this file). Prints losses, then
``TRACES {...}``.
"""

import importlib.util
import json
import os
import sys
import tempfile
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


def unseen(model, x, y):
    """Calls outside the profile: a batch of 10 and a step far beyond the profile's.

    Inside the writer's context: a trace captures the default summary writer, so a
    single-trace function called after its writer closed fails where the original
    (retracing for the new shape) would not; the hand fix behaves the same.
    """
    loss, rate = model.train_step(x[:10], y[:10], 40000)
    return f"UNSEEN batch 10, step 40000: loss {float(loss):.4f} lr {float(rate):.6f}"


def main():
    model = load_module()
    rng = np.random.default_rng(8)
    x = rng.normal(size=(64, 5)).astype("float32")
    y = (x @ np.arange(1.0, 6.0)).astype("float32")
    with tempfile.TemporaryDirectory() as logdir:
        writer = tf.summary.create_file_writer(logdir)
        with writer.as_default():
            for global_step in range(20):
                loss, rate = model.train_step(x, y, tf.constant(global_step, tf.int64))
                if global_step % 5 == 4:
                    print(f"step {global_step}: loss {float(loss):.4f} lr {float(rate):.4f}")
            traces = {"train_step": model.train_step.experimental_get_tracing_count()}
            outside = unseen(model, x, y) if os.environ.get("GOLDEN_UNSEEN") == "1" else None
        writer.close()
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if outside is not None:  # calls outside the profile
        print(outside)


if __name__ == "__main__":
    main()
