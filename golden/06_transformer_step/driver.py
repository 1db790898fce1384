"""Golden case 06: a transformer-style training step on padded int64 token batches.

Every batch is padded to its own longest sequence, and the batch size changes too,
so both dimensions of ``tokens`` (batch, seq) vary. Usage: ``python driver.py
[MODULE.py]`` (default: model.py beside this file). Prints losses, then ``TRACES {...}``.
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


def padded_batch(rng, batch_size, vocab):
    lengths = rng.integers(3, 20, size=batch_size)
    tokens = np.zeros((batch_size, lengths.max()), dtype=np.int64)
    for row, length in enumerate(lengths):
        tokens[row, :length] = rng.integers(1, vocab, size=length)
    labels = (tokens[:, 0] % 2).astype(np.int64)
    return tokens, labels


def unseen(model, rng):
    """Calls outside the profile: a larger batch."""
    tokens, labels = padded_batch(rng, batch_size=11, vocab=model.VOCAB)
    print(f"UNSEEN batch 11: loss {float(model.train_step(tokens, labels)):.4f}")


def main():
    model = load_module()
    rng = np.random.default_rng(6)
    for step in range(16):
        tokens, labels = padded_batch(rng, batch_size=4 + step % 5, vocab=model.VOCAB)
        loss = model.train_step(tokens, labels)
        print(f"step {step}: tokens {tokens.shape} loss {float(loss):.4f}")
    traces = {"train_step": model.train_step.experimental_get_tracing_count()}
    print("TRACES " + json.dumps(traces, sort_keys=True))
    if os.environ.get("GOLDEN_UNSEEN") == "1":  # calls outside the profile
        unseen(model, rng)


if __name__ == "__main__":
    main()
