"""Small programs for the probe tests (``tests/test_probe_tf.py``): each function retraces,
so ``autosig profile`` probes it. Plain text: they run only as ``python prog.py``."""

VERDICTS = '''
import numpy as np
import tensorflow as tf


class DeepDream(tf.Module):
    """A DeepDream-style step: image, steps, step size; a 3-channel conv kernel."""

    def __init__(self):
        super().__init__()
        self.kernel = tf.Variable(tf.random.stateless_normal([3, 3, 3, 4], seed=[1, 2]))

    @tf.function
    def __call__(self, img, steps, step_size):
        loss = tf.constant(0.0)
        for _ in tf.range(steps):
            with tf.GradientTape() as tape:
                tape.watch(img)
                features = tf.nn.conv2d(img[tf.newaxis], self.kernel, 1, "SAME")  # CONV
                loss = tf.reduce_mean(features)
            gradients = tape.gradient(loss, img)
            gradients /= tf.math.reduce_std(gradients) + 1e-8
            img = tf.clip_by_value(img + gradients * step_size, -1, 1)
        return loss, img


@tf.function
def tensor_array(x):
    ta = tf.TensorArray(tf.float32, size=x.shape[0])  # TENSORARRAY
    for i in tf.range(tf.shape(x)[0]):
        ta = ta.write(i, tf.reduce_sum(x[i]))
    return ta.stack()


@tf.function
def if_one(x):
    if x.shape[0] == 1:
        x = tf.squeeze(x, 0)  # SQUEEZE
    return x * 2.0


@tf.function
def range_loop(x):
    total = tf.zeros_like(x[:, 0])
    for i in range(x.shape[1]):  # RANGE
        total += x[:, i]
    return total


@tf.function
def mean_by_static(x):
    return tf.reduce_sum(x) / x.shape[0]  # STATIC DIVIDE


@tf.function
def focal(x, gamma):
    return tf.math.pow(x, gamma)


T0 = 1_700_000_000.0


@tf.function
def stamp(x, t):
    return x + (t - T0)  # STAMP


@tf.function
def noise(x, seed):
    return x + tf.random.stateless_normal(tf.shape(x), seed=[seed, 0])


@tf.function
def column(p, k):
    return p[:, k]  # a Python int slice bound: [0, k] to [0, k + 1]


@tf.function
def scaled_step(x, step):
    return x * tf.cast(step * 1000003, tf.float32)  # int32 would overflow at step 3000


embeddings = tf.Variable(tf.random.stateless_normal([50, 8], seed=[3, 4]))
nce_weights = tf.Variable(tf.random.stateless_normal([50, 8], seed=[5, 6]))
nce_biases = tf.Variable(tf.zeros([50]))


@tf.function
def nce(ids, labels):
    inputs = tf.nn.embedding_lookup(embeddings, ids)
    loss = tf.nn.nce_loss(nce_weights, nce_biases, labels, inputs, num_sampled=4, num_classes=50)
    return tf.reduce_mean(loss)


class Lazy(tf.Module):
    """Weights built on the first call, in a branch later traces skip."""

    def __init__(self):
        super().__init__()
        self.w = None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.random.normal([x.shape[-1], 2]))
        return x @ self.w  # MATMUL


traces = tf.Variable(0)


@tf.function
def counted(x):
    with tf.init_scope():
        traces.assign_add(1)  # an eager op at trace time: refused in the probe copy
    return x + 1.0


def main():
    rng = np.random.default_rng(0)
    dream = DeepDream()
    for i, (h, w) in enumerate([(10, 12), (11, 13), (12, 9)]):
        img = tf.constant(rng.uniform(-1, 1, (h, w, 3)).astype("float32"))
        loss, _ = dream(img, steps=1 + i % 2, step_size=0.01 * (1 + i))
        print("dream", i, round(float(loss), 5))
    for b in (3, 5):
        x = tf.constant(rng.normal(size=(b, 4)).astype("float32"))
        print(tensor_array(x).shape, if_one(x).shape, range_loop(x).shape, float(mean_by_static(x)))
        print(focal(x, b).shape, stamp(x, T0 + b + 0.25).shape, noise(x, 3_000_000_000 + b).shape)
        ids = tf.constant(rng.integers(0, 50, size=(b,)), tf.int64)
        print("nce", float(nce(ids, tf.reshape(ids, [-1, 1]))))
        print("lazy", Lazy()(x).shape, "counted", counted(x).shape)
        print("column", column(x, b - 2).shape, "scaled", scaled_step(x, 3000 + b).shape)
    print("eager traces counted", int(traces.numpy()))


if __name__ == "__main__":
    main()
'''

SIDE_EFFECTS = """
import random

import numpy as np
import tensorflow as tf
import keras

tf.random.set_seed(7)
keras.utils.set_random_seed(7)
TRACED = 0


@tf.function
def noisy(x):
    global TRACED
    TRACED += 1
    print("tracing noisy", x.shape)
    jitter = random.random()  # Python RNG at trace time: frozen into the graph
    return x + tf.random.normal(tf.shape(x)) + jitter


class Counter(tf.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.seen = []

    @tf.function
    def __call__(self, x, scale):
        self.calls += 1
        self.seen.append(tuple(x.shape))
        return tf.reduce_sum(x) * scale


model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dropout(0.3), keras.layers.Dense(2)])
model.build((None, 5))
optimizer = keras.optimizers.SGD(0.05)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def main():
    rng = np.random.default_rng(1)
    counter = Counter()
    for n in (2, 3, 4, 3):
        print("noisy", np.round(noisy(tf.zeros([n])).numpy(), 5).tolist())
        print("counter", float(counter(tf.ones([n, 2]), float(n))))
    for b in (4, 6, 4, 5):
        x = rng.normal(size=(b, 5)).astype("float32")
        y = rng.normal(size=(b, 2)).astype("float32")
        print("loss", round(float(train_step(x, y)), 6))
    print("eager after", np.round(tf.random.uniform([3]).numpy(), 6).tolist())
    print("numpy after", np.random.random(), "python after", random.random())
    print("traced", TRACED, "calls", counter.calls, "seen", counter.seen)
    print("layers", [layer.name for layer in model.layers], keras.layers.Dense(1).name)
    print("weights", round(float(sum(tf.reduce_sum(w) for w in model.weights)), 5))
    print("traces", noisy.experimental_get_tracing_count(),
          counter.__call__.experimental_get_tracing_count(),
          train_step.experimental_get_tracing_count())


if __name__ == "__main__":
    main()
"""

MANY = """
import tensorflow as tf


@tf.function
def a(x):
    return x * 2.0


@tf.function
def b(x):
    return x + 1.0


@tf.function
def c(x):
    return tf.reduce_mean(x, axis=0)


for n in (2, 3, 4):
    for f in (a, b, c):
        f(tf.ones([n, 3]))
print("done")
"""

NUMBERS_AND_NOISE = """
import random
import sys

import numpy as np
import tensorflow as tf


@tf.function
def jitter(x):
    return x + random.random() * 0.01  # JITTER: drawn while tracing, not a size


@tf.function
def half(x, scale):
    return x * scale  # x is float16: the Python float takes float16


@tf.function
def counted_mean(x, n):
    return tf.reduce_sum(x) / tf.cast(n, tf.float32)  # CAST: n is only cast to float32


@tf.function
def weighted_total(x, w):
    return tf.reduce_sum(tf.cast(x, tf.float32)) * w  # w meets float32 whatever x's dtype


def main():
    rng = np.random.default_rng(0)
    for b in (3, 5, 4):
        x = tf.constant(rng.normal(size=(b, 4)).astype("float32"))
        print("jitter", jitter(x).shape)
        print("half", half(tf.cast(x, tf.float16), 0.5 + b).numpy().tolist())
        print("mean", float(counted_mean(x, b)))
        print("weighted", float(weighted_total(x, 0.25 * b)))
    if "--unseen" in sys.argv:  # calls the profile never saw
        x = tf.constant(rng.normal(size=(7, 4)).astype("float32"))
        print("UNSEEN half", half(tf.cast(x, tf.float16), 0.3).numpy().tolist())
        print("UNSEEN mean", float(counted_mean(x, 12.5)), float(counted_mean(x, 2**20 + 1)))
        print("UNSEEN weighted", float(weighted_total(x, 0.3)))


if __name__ == "__main__":
    main()
"""
