"""Golden case 24: a quickstart-style train step with a Keras loss object.

Six steps on batches of varying size (a short profile of a data pipeline that filters
examples). Usage: ``python driver.py [MODULE.py]``. Prints the losses and the
metric, then ``TRACES {...}``; with ``GOLDEN_UNSEEN=1`` also batch sizes never seen
(1 and 40).
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np


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
    features = rng.normal(size=(size, 8)).astype("float32")
    labels = (features[:, 0] > 0).astype("int64") + 2 * (features[:, 1] > 0).astype("int64")
    return features, labels


def main():
    module = load_module()
    rng = np.random.default_rng(5)
    for step, size in enumerate((32, 29, 32, 17, 25, 12)):
        loss = module.train_step(*batch(rng, size))
        print(f"step {step}: batch {size} loss {float(loss):.5f}")
    print(f"mean loss {float(module.train_loss.result()):.5f}")
    traces = {"train_step": module.train_step.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        for size in (1, 40):
            loss = module.train_step(*batch(rng, size))
            print(f"UNSEEN batch {size}: loss {float(loss):.5f}")
        weights = module.model.trainable_variables[0].numpy()
        print(f"UNSEEN weights sum {float(weights.sum()):.5f}")


if __name__ == "__main__":
    main()
