"""What ``autosig verify`` costs against the workload's own run time.

For each workload (golden cases and a small but real text-classifier training script,
200 steps of varying batch size and length), in a fresh temporary copy:

1. the workload alone (``python driver.py``), wall time;
2. ``autosig profile`` (not counted in the ratios);
3. ``autosig verify --no-xla --no-reuse`` (graph mode: the original and the rewritten
   run, cold);
4. ``autosig verify --no-xla`` again (the stored original run is reused, as in a
   ``fix --verify`` or a second ``verify`` after the first);
5. ``autosig verify --xla --no-reuse`` (graph mode plus the rewritten run under XLA).

Ratios are verify's wall time over the workload's own. Prints a markdown table and
writes the numbers as JSON.

    python scripts/bench_verify.py [--repeats 1] [--json bench-results/verify.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ["04_eleven_retraces", "06_transformer_step", "07_module_python_scalars"]

TRAIN_MODEL = """\
import tensorflow as tf

VOCAB = 2000


def build():
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Embedding(VOCAB, 64),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(2),
        ]
    )
    model.build((None, None))
    return model


class Trainer:
    def __init__(self):
        self.model = build()
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.optimizer.build(self.model.trainable_variables)
        self.loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.seen = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def train_step(self, tokens, labels):
        with tf.GradientTape() as tape:
            logits = self.model(tokens, training=True)
            loss = self.loss(labels, logits)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.seen.assign_add(tf.cast(tf.shape(tokens)[0], tf.int64))
        return loss
"""

TRAIN_DRIVER = """\
import numpy as np
import tensorflow as tf

from model import VOCAB, Trainer

tf.random.set_seed(0)
rng = np.random.default_rng(0)
trainer = Trainer()
for step in range(200):
    batch = int(rng.choice([16, 24, 32]))
    length = int(rng.integers(8, 40))
    tokens = tf.constant(rng.integers(0, VOCAB, size=(batch, length)), tf.int32)
    labels = tf.constant(rng.integers(0, 2, size=(batch,)), tf.int32)
    loss = trainer.train_step(tokens, labels)
print("seen", int(trainer.seen.numpy()), "loss", float(loss))
"""


def _run(cmd: list[str], cwd: Path) -> tuple[float, int, str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done.returncode, done.stdout + done.stderr


TRAINING = "text_train_script"
"""The training script these benchmarks write (not a golden case)."""


def prepare(name: str, work: Path) -> Path:
    """A copy of golden case ``name`` (without its expected outputs), or the training
    script, in ``work``."""
    target = work / name
    if name == TRAINING:
        target.mkdir()
        (target / "model.py").write_text(TRAIN_MODEL)
        (target / "driver.py").write_text(TRAIN_DRIVER)
    else:
        shutil.copytree(ROOT / "golden" / name, target)
        shutil.rmtree(target / "expected", ignore_errors=True)
    return target


def measure(name: str, repeats: int) -> dict[str, object]:
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="autosig-bench-verify-") as tmp:
        project = prepare(name, Path(tmp))
        _, code, out = _run([py, "-m", "autosig", "profile", "--", py, "driver.py"], project)
        if code != 0:
            raise SystemExit(f"{name}: profile failed:\n{out}")
        plain, graph, reused, xla = [], [], [], []
        verdicts: list[str] = []
        for _ in range(repeats):
            plain.append(_run([py, "driver.py"], project)[0])
            for options, into in (
                (["--no-xla", "--no-reuse"], graph),
                (["--no-xla"], reused),
                (["--xla", "--no-reuse"], xla),
            ):
                wall, code, out = _run(
                    [py, "-m", "autosig", "verify", *options, "--", py, "driver.py"], project
                )
                into.append(wall)
                last = out.strip().splitlines()[-1]
                verdicts.append(f"{' '.join(options)}: exit {code}: {last}")
        workload = statistics.median(plain)
        row: dict[str, object] = {"workload": name, "workload_s": round(workload, 2)}
        for label, times in (("graph", graph), ("reused", reused), ("xla", xla)):
            row[f"verify_{label}_s"] = round(statistics.median(times), 2)
            row[f"{label}_ratio"] = round(statistics.median(times) / workload, 2)
        row["verdicts"] = verdicts
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", type=Path, default=ROOT / "bench-results" / "verify.json")
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    names = args.only or [*GOLDEN, TRAINING]
    rows = [measure(name, args.repeats) for name in names]
    print(
        "| workload | alone (s) | verify --no-xla, cold (s) | ratio "
        "| again, original reused (s) | ratio | verify --xla, cold (s) | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['workload']} | {row['workload_s']} | {row['verify_graph_s']} | "
            f"{row['graph_ratio']}x | {row['verify_reused_s']} | {row['reused_ratio']}x | "
            f"{row['verify_xla_s']} | {row['xla_ratio']}x |"
        )
    for row in rows:
        for line in row["verdicts"]:  # type: ignore[union-attr]
            print(f"{row['workload']}: {line}", file=sys.stderr)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
