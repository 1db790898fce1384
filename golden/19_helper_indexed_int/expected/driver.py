"""Golden case 19: a Python int target column passed to a helper of another project
module, which only indexes a tensor with it (``values[..., column]``).

Twelve steps over target columns 0..3. Usage: ``python driver.py [MODULE.py]``
(default: model.py beside this file). Prints losses, then ``TRACES {...}``.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

sys.path.insert(0, str(Path(__file__).resolve().parent))  # windows.py, for any MODULE.py


def load_module():
    """Import the module under test as ``model``: model.py, or the file in argv[1]."""
    if len(sys.argv) < 2:
        import model

        return model
    spec = importlib.util.spec_from_file_location("model", Path(sys.argv[1]).resolve())
    module = importlib.util.module_from_spec(spec)
    sys.modules["model"] = module
    spec.loader.exec_module(module)
    return module


def windows_of(series, start, batch):
    """``batch`` windows of 6 consecutive steps starting at ``start``."""
    return np.stack([series[start + i : start + i + 6] for i in range(batch)])


def unseen(model, series):
    """Calls outside the profile: column 4 and -1 (never seen), a batch of 7."""
    for target, batch in ((4, 16), (-1, 16), (2, 7)):
        loss = model.train_step(windows_of(series, 50, batch), target)
        print(f"UNSEEN target {target} batch {batch}: loss {float(loss):.6f}")


def main():
    model = load_module()
    steps = np.arange(200, dtype=np.float32)[:, None]
    series = np.sin(steps * np.array([0.1, 0.2, 0.3, 0.05, 0.15], np.float32)).astype("float32")
    for step in range(12):
        target = step % 4
        loss = model.train_step(windows_of(series, 3 * step, 16), tf.constant(target))
        print(f"step {step} target {target}: loss {float(loss):.6f}")
    traces = {"train_step": model.train_step.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, series)


if __name__ == "__main__":
    main()
