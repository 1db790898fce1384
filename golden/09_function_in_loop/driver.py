"""Golden case 09: a tf.function created inside a loop (AS106), and a bound method
wrapped in tf.function anew on each call.

All batches have the same shape: every trace here comes from a new tf.function object.
Trace counts are summed over every tf.function object created for the same Python
function (they are created and dropped inside model code). Usage: ``python driver.py
[MODULE.py]`` (default: model.py beside this file). Prints results, then ``TRACES {...}``.
"""

import importlib.util
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from tensorflow.python.eager.polymorphic_function import polymorphic_function

CREATED = []


def record_every_tf_function():
    """Keep every tf.function object made from now on, to count all their traces."""
    original_init = polymorphic_function.Function.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        CREATED.append(self)

    polymorphic_function.Function.__init__ = init


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


def unseen(model, rng):
    """Calls outside the profile: other batch sizes and widths, another limit."""
    batches = [rng.normal(size=shape).astype("float32") for shape in ((5, 4), (16, 7))]
    for batch in model.preprocess_all(batches):
        print(f"UNSEEN {batch.shape}: max {float(np.max(batch)):.4f}")
    clipped = model.Clipper(limit=0.5)(batches[0])
    print(f"UNSEEN clip: max {float(np.max(clipped)):.4f}")


def main():
    record_every_tf_function()
    model = load_module()
    rng = np.random.default_rng(9)
    batches = [rng.normal(size=(16, 4)).astype("float32") for _ in range(8)]
    standardized = model.preprocess_all(batches)
    clipper = model.Clipper(limit=1.5)
    clipped = [clipper(batch) for batch in standardized]
    for index, batch in enumerate(clipped):
        print(f"batch {index}: max {float(np.max(batch)):.4f} min {float(np.min(batch)):.4f}")
    traces = defaultdict(int)
    for fn in CREATED:
        name = getattr(fn.python_function, "__qualname__", fn.__name__)
        traces[name] += fn.experimental_get_tracing_count()
    print("TRACES " + json.dumps(dict(traces), sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
