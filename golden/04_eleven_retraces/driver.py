"""Golden case 04: eleven consecutive retraces of one function.

Each call brings a token sequence of a new length, ``weights`` whose dtype flips
between float32 and float64, and a new ``FeatureOptions`` object. Usage:
``python driver.py [MODULE.py]`` (default: model.py beside this file). Prints
results, then ``TRACES {...}``.
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


def unseen(model, rng):
    """Calls outside the profile: a longer token list, another scale."""
    tokens = tf.constant(rng.integers(0, 8, size=20), dtype=tf.int32)
    weights = tf.cast(tf.linspace(1.0, 2.0, 8), tf.float32)
    features = model.featurize(tokens, weights, model.FeatureOptions(vocab_size=8, scale=2.0))
    print("UNSEEN " + " ".join(f"{v:.3f}" for v in features.numpy()))


def main():
    model = load_module()
    rng = np.random.default_rng(4)
    vocab = 8
    for call in range(11):
        tokens = tf.constant(rng.integers(0, vocab, size=5 + call), dtype=tf.int32)
        dtype = tf.float32 if call % 2 == 0 else tf.float64
        weights = tf.cast(tf.linspace(1.0, 2.0, vocab), dtype)
        options = model.FeatureOptions(vocab_size=vocab, scale=0.5)
        features = model.featurize(tokens, weights, options)
        values = " ".join(f"{v:.3f}" for v in features.numpy())
        print(f"call {call}: {features.dtype.name} {values}")
    traces = {"featurize": model.featurize.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
