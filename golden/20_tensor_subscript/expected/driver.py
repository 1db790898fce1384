"""Golden case 20: a Python int class column ``k`` that indexes the model's output
(``p = model(x); p[:, k]``) and a Python float class weight that scales the loss
differentiated with ``tape.gradient``.

Twelve steps, classes 0, 1, 2 in turn, class weights decaying every round. Usage:
``python driver.py [MODULE.py]`` (default: model.py beside this file). Prints the
losses and scores, then ``TRACES {...}``.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np

CLASS_WEIGHTS = (1.0, 2.5, 0.5)


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


def batch(rng, size, k):
    """Features and the one-vs-rest label of class ``k``."""
    x = rng.normal(size=(size, 4)).astype("float32")
    labels = np.argmax(x[:, :3] + 0.3 * x[:, 3:], axis=1)
    return x, (labels == k).astype("float32")


def unseen(model, rng):
    """Calls outside the profile: weights never seen, a batch of 5, column -1."""
    for k, weight, size in ((2, 10.0, 16), (0, 0.125, 5), (-1, 3.0, 16)):
        x, y = batch(rng, size, k % 3)
        scores, loss = model.class_step(x, y, k, weight)
        print(
            f"UNSEEN k={k} w={weight} n={size}: loss {float(loss):.6f} "
            f"score {float(np.sum(scores)):.5f}"
        )


def main():
    model = load_module()
    rng = np.random.default_rng(20)
    for step in range(12):
        k = step % 3
        weight = CLASS_WEIGHTS[k] * 0.9 ** (step // 3)
        x, y = batch(rng, 16, k)
        scores, loss = model.class_step(x, y, k, weight)
        print(
            f"step {step} k={k} w={weight:.4f}: loss {float(loss):.6f} "
            f"score {float(np.sum(scores)):.5f}"
        )
    traces = {"class_step": model.class_step.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
