"""Golden case 12: nested dict inputs, and a RaggedTensor input.

Ten batches of varying size: a two-level dict of feature tensors, and ragged lists of
token ids of varying lengths. Usage: ``python driver.py [MODULE.py]`` (default:
model.py beside this file). Prints results, then ``TRACES {...}``.
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


def random_features(rng, batch):
    """One batch of the nested user/item features."""
    return {
        "user": {
            "age": tf.constant(rng.uniform(18, 70, batch), tf.float32),
            "income": tf.constant(rng.uniform(0, 5, batch), tf.float32),
        },
        "item": {
            "price": tf.constant(rng.uniform(1, 9, batch), tf.float32),
            "category": tf.constant(rng.integers(0, 5, batch), tf.int64),
        },
    }


def unseen(model, rng):
    """Calls outside the profile: a batch of 9 and a batch of 1."""
    for batch in (9, 1):
        features = random_features(rng, batch)
        tokens = tf.RaggedTensor.from_row_lengths(
            tf.constant(rng.integers(0, 40, size=2 * batch), tf.int64), [2] * batch
        )
        score = float(tf.reduce_sum(model.score_features(features)))
        bag = float(tf.reduce_sum(model.bag_of_words(tokens)))
        print(f"UNSEEN batch {batch}: score {score:.4f} bag {bag:.4f}")


def main():
    model = load_module()
    rng = np.random.default_rng(12)
    for step in range(10):
        batch = 3 + step % 4
        features = random_features(rng, batch)
        lengths = rng.integers(1, 7, size=batch)
        tokens = tf.RaggedTensor.from_row_lengths(
            tf.constant(rng.integers(0, 40, size=int(lengths.sum())), tf.int64), lengths
        )
        scores = model.score_features(features)
        bags = model.bag_of_words(tokens)
        print(
            f"step {step}: batch {batch} score {float(tf.reduce_sum(scores)):.4f}"
            f" bag {float(tf.reduce_sum(bags)):.4f}"
        )
    traces = {
        "score_features": model.score_features.experimental_get_tracing_count(),
        "bag_of_words": model.bag_of_words.experimental_get_tracing_count(),
    }
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
