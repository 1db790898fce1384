"""Realistic programs that probe autosig's contract (issues 21 and 22).

Each ``Case`` is a few lines in the style of real TensorFlow code (tutorials, Keras
guides, model zoos, RL code), with the calls a profile records and calls the profile
never saw. ``contract_cases.py`` runs them; ``test_contract_tf.py`` holds the verdicts.

The contract (README, Safety): a fix labelled safe may only reject what the original
rejects, and returns the same values, dtypes and shapes on every input the original
accepts. ``hand`` is the fix a careful engineer writes (edits of the case's files): its
trace count on the profiled calls is the target a fix should reach; a case without one
has no safe fix to write, and the right answer is to leave it (or explain it).

``known`` names what today's main does wrong with the case, so the test can expect it
(strictly: it fails once the case is fixed, and the note must go): for a contract case,
why the safe fix breaks it; for a precision case, why it is left short of the hand fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

CLASSES: dict[str, str] = {
    "21.1": "Python numbers tensorized in the wrong dtype",
    "21.2": "silent value changes",
    "21.3": "domain narrowed beyond the profile",
    "21.4": "static reads the analysis cannot see",
    "21.5": "stateful random ops not recognised",
    "22": "Python state read at trace time",
    "precision": "must be fixed (to the hand fix's trace count)",
}
"""The classes of issue 21 ("Breaks remain"), issue 22 (Python state), and the
precision cases a correct tool fixes (counted apart from the contract's breaks)."""


@dataclass(frozen=True)
class Case:
    name: str
    klass: str
    """A key of ``CLASSES``."""
    origin: str
    """Where the pattern comes from, and what the case probes."""
    files: Mapping[str, str]
    """File name -> source; ``model.py`` is imported as ``m``; other modules are
    imported by it (multi-module cases)."""
    profiled: str
    """Statements: the calls the profile records (``out = ...`` to compare their
    results too)."""
    unseen: tuple[str, ...]
    """Expressions outside the profile, each compared on its own; the original accepts
    every one."""
    setup: str = ""
    """Statements run before the profiled calls (data, instances); not recorded."""
    rejected: tuple[str, ...] = ()
    """Expressions the original rejects: a fix must reject them too."""
    hand: tuple[tuple[str, str, str], ...] | None = None
    """The expert's fix: (file, old text, new text) edits."""
    random: str = ""
    """For programs that draw random numbers: what is compared and why."""
    known: str = ""
    """What today's main does wrong here (see the module docstring); empty: nothing."""


M = "model.py"


def signature(*specs: str, file: str = M, decorator: str = "@tf.function\n") -> tuple:
    """The hand edit giving the (only) ``decorator`` in ``file`` an input_signature."""
    indent = decorator[: len(decorator) - len(decorator.lstrip())]
    return (file, decorator, f"{indent}@tf.function(input_signature=[{', '.join(specs)}])\n")


def spec(shape: str, dtype: str = "float32") -> str:
    return f"tf.TensorSpec({shape}, tf.{dtype})"


DRIVER = (
    "import sys\nsys.path.insert(0, m.__file__.rsplit('/', 1)[0])\nimport train\nsys.path.pop(0)\n"
)
"""Setup importing the case's own ``train.py`` (a driver that is a file of the project)
beside ``model.py``."""


CASES: list[Case] = [
    # ------------------------------------------------------------------------------ 21.1
    Case(
        name="focal_loss_int_gamma",
        klass="21.1",
        origin="focal loss (RetinaNet, tf-addons SigmoidFocalCrossEntropy) in a gamma sweep "
        "with integer gammas: tf.math.pow(1 - p_t, gamma) takes gamma in p_t's dtype",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def focal_loss(labels, logits, gamma):
                p = tf.sigmoid(logits)
                p_t = labels * p + (1 - labels) * (1 - p)
                ce = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
                return tf.reduce_mean(tf.math.pow(1.0 - p_t, gamma) * ce)
            """
        },
        setup="""
            labels = tf.constant([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
            logits = tf.constant([[2.0, -1.0, 0.5], [0.3, -2.0, 1.5]])
        """,
        profiled="out = [m.focal_loss(labels, logits, g) for g in (0, 1, 2, 3)]",
        unseen=("m.focal_loss(labels, logits, 5)", "m.focal_loss(labels[:1], logits[:1], 2.5)"),
        hand=(signature(spec("[None, None]"), spec("[None, None]"), spec("[]")),),
    ),
    Case(
        name="brightness_int_delta",
        klass="21.1",
        origin="image augmentation in a Python data loop (delta = random.randint(-32, 32)) "
        "on 0..255 float images: tf.image.adjust_brightness(image, delta)",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def augment(image, delta):
                image = tf.image.adjust_brightness(image, delta)
                return tf.clip_by_value(image, 0.0, 255.0)
            """
        },
        setup="img = tf.reshape(tf.range(2 * 4 * 4 * 3, dtype=tf.float32) * 2.5, [2, 4, 4, 3])",
        profiled="out = [m.augment(img, d) for d in (-20, 5, 32)]",
        unseen=("m.augment(img, 7)", "m.augment(img[:1], -3)", "m.augment(img, 2.5)"),
        hand=(signature(spec("[None, 4, 4, 3]"), spec("[]")),),
    ),
    Case(
        name="lr_decay_module_float",
        klass="21.1",
        origin="exponential learning-rate decay in a hand-written update (DECAY ** epoch, "
        "DECAY a module float constant), epoch a Python int",
        files={
            M: """
            import tensorflow as tf

            INITIAL_LR = 0.1
            DECAY = 0.96

            @tf.function
            def decayed_step(w, grad, epoch):
                lr = INITIAL_LR * DECAY ** epoch
                return w - lr * grad
            """
        },
        setup="w, g = tf.constant([1.0, -2.0, 3.0]), tf.constant([0.5, 0.25, -1.0])",
        profiled="out = [m.decayed_step(w, g, epoch) for epoch in range(4)]",
        unseen=("m.decayed_step(w, g, 10)", "m.decayed_step(w[:2], g[:2], 1)"),
        hand=(signature(spec("[None]"), spec("[None]"), spec("[]")),),
    ),
    Case(
        name="label_smoothing_convert_to_tensor",
        klass="21.1",
        origin="label smoothing with tf.convert_to_tensor(num_classes, dtype=tf.float32), "
        "num_classes a Python int that differs per task head",
        files={
            M: """
            import tensorflow as tf

            SMOOTHING = 0.1

            @tf.function
            def smooth_labels(labels, num_classes):
                n = tf.convert_to_tensor(num_classes, dtype=tf.float32)
                onehot = tf.one_hot(labels, num_classes)
                return onehot * (1.0 - SMOOTHING) + SMOOTHING / n
            """
        },
        profiled="out = [m.smooth_labels(tf.constant([0, 2, 1]), k) for k in (3, 5, 10)]",
        unseen=("m.smooth_labels(tf.constant([6, 1]), 7)",),
        hand=(
            signature(spec("[None]", "int32"), spec("[]", "int32")),
            (
                M,
                "tf.convert_to_tensor(num_classes, dtype=tf.float32)",
                "tf.cast(num_classes, tf.float32)",
            ),
        ),
    ),
    Case(
        name="float64_variable_python_lr",
        klass="21.1",
        origin="a float64 parameter (scientific code, physics-informed nets) updated by "
        "w.assign_sub(lr * grad) with a Python learning rate from a schedule",
        files={
            M: """
            import tensorflow as tf

            w = tf.Variable(tf.zeros([3], tf.float64))

            @tf.function
            def sgd_step(grad, lr):
                w.assign_sub(lr * grad)
                return w.read_value()
            """
        },
        setup="g = tf.constant([0.5, -1.25, 2.0], tf.float64)",
        profiled="out = [m.sgd_step(g, lr) for lr in (0.1, 0.05, 0.025)]",
        unseen=("m.sgd_step(g * 2.0, 0.01)", "m.sgd_step(g, 0.3)"),
        hand=(signature(spec("[3]", "float64"), spec("[]", "float64")),),
    ),
    Case(
        name="float16_loss_scale",
        klass="21.1",
        origin="mixed precision with a hand-written dynamic loss scale (halved on overflow): "
        "a float16 loss times a Python float scale",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def scaled_loss(predictions, targets, loss_scale):
                loss = tf.reduce_mean(tf.square(predictions - targets))
                return loss * loss_scale
            """
        },
        setup="""
            p = tf.constant([0.5, 0.25, -0.75], tf.float16)
            t = tf.constant([0.0, 0.5, -1.0], tf.float16)
        """,
        profiled="out = [m.scaled_loss(p, t, s) for s in (32768.0, 16384.0, 8192.0)]",
        unseen=("m.scaled_loss(p, t, 4096.0)", "m.scaled_loss(p[:2], t[:2], 1024.0)"),
        hand=(
            signature(spec("[None]", "float16"), spec("[None]", "float16"), spec("[]", "float16")),
        ),
    ),
    Case(
        name="attention_key_dim_pow",
        klass="21.1",
        origin="scaled dot-product attention (Transformer tutorial) dividing by "
        "key_dim ** 0.5, key_dim a Python int per head size",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def attention_scores(q, k, key_dim):
                return tf.matmul(q, k, transpose_b=True) / key_dim ** 0.5
            """
        },
        setup="""
            def qk(d, t=3):
                x = tf.reshape(tf.range(2 * t * d, dtype=tf.float32) / 10.0, [2, t, d])
                return x, x[:, ::-1]
        """,
        profiled="out = [m.attention_scores(*qk(d), d) for d in (4, 8, 16)]",
        unseen=("m.attention_scores(*qk(32, 5), 32)", "m.attention_scores(*qk(6), 6)"),
        hand=(signature(spec("[2, None, None]"), spec("[2, None, None]"), spec("[]")),),
    ),
    Case(
        name="positional_encoding_int_depth",
        klass="21.1",
        origin="the Transformer tutorial's positional_encoding(length, depth) in TensorFlow "
        "ops: depth = depth / 2 is a Python float; as an int32 tensor it becomes float64",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def positional_encoding(length, depth):
                depth = depth / 2
                positions = tf.range(length, dtype=tf.float32)[:, tf.newaxis]
                depths = tf.range(depth, dtype=tf.float32)[tf.newaxis, :] / depth
                angle_rads = positions / (10000.0**depths)
                return tf.concat([tf.sin(angle_rads), tf.cos(angle_rads)], axis=-1)
            """
        },
        profiled="out = [m.positional_encoding(n, d) for n, d in ((4, 8), (6, 8), (4, 16))]",
        unseen=("m.positional_encoding(3, 4)", "m.positional_encoding(10, 8)"),
        hand=(
            signature(spec("[]", "int32"), spec("[]", "int32")),
            (M, "depth = depth / 2", "depth = tf.cast(depth, tf.float32) / 2"),
        ),
    ),
    # ------------------------------------------------------------------------------ 21.2
    Case(
        name="timestamps_elapsed",
        klass="21.2",
        origin="throughput logging: examples / (now - start_time) with time.time() floats "
        "(~1.7e9, float32 resolution 128 s)",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def throughput(examples, start_time, now):
                elapsed = now - start_time
                return tf.cast(examples, tf.float32) / elapsed
            """
        },
        setup="start = 1_700_000_000.25",
        profiled="out = [m.throughput(tf.constant(64 * i), start, start + 2.5 * i) "
        "for i in range(1, 4)]",
        unseen=(
            "m.throughput(tf.constant(640), start, start + 30.75)",
            "m.throughput(tf.constant(64), start + 100.0, start + 101.5)",
        ),
        hand=(
            signature(spec("[]", "int32"), spec("[]", "float64"), spec("[]", "float64")),
            (M, "/ elapsed", "/ tf.cast(elapsed, tf.float32)"),
        ),
    ),
    Case(
        name="hash_seed_above_int32",
        klass="21.2",
        origin="per-file augmentation seeds from zlib.crc32(path) (0..2**32; the profile "
        "saw two above 2**31): tf.random.stateless_uniform(seed=[seed, 0])",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def jitter(image, seed):
                noise = tf.random.stateless_uniform(tf.shape(image), seed=[seed, 0])
                return image + 0.1 * noise
            """
        },
        setup="""
            import zlib
            seeds = [zlib.crc32(f"img_{i}.png".encode()) for i in range(6)]
            img = tf.zeros([2, 3])
        """,
        profiled="out = [m.jitter(img, s) for s in seeds[2:]]",
        unseen=(
            "m.jitter(img, seeds[0])",
            "m.jitter(img[:1], seeds[1])",
            "m.jitter(img, 4_000_000_000)",
        ),
        hand=(signature(spec("[None, None]"), spec("[]", "int64")),),
    ),
    Case(
        name="seed_plus_episode_wraps",
        klass="21.2",
        origin="RL exploration noise seeded by base_seed + episode (base seed near 2**31 "
        "from a hash): Python adds exactly; an int32 tensor wraps silently",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def exploration_noise(actions, base_seed, episode):
                noise = tf.random.stateless_normal(tf.shape(actions), seed=[base_seed + episode, 0])
                return actions + 0.2 * noise
            """
        },
        setup="a = tf.zeros([2, 2])",
        profiled="out = [m.exploration_noise(a, 2_147_483_000, e) for e in range(3)]",
        unseen=(
            "m.exploration_noise(a, 2_147_483_000, 900)",
            "m.exploration_noise(a[:1], 2_147_483_000, 5)",
        ),
        hand=(signature(spec("[None, 2]"), spec("[]", "int64"), spec("[]", "int64")),),
    ),
    Case(
        name="float64_numpy_cast",
        klass="21.2",
        origin="a log-likelihood over probabilities profiled with float32 tensors, later "
        "fed float64 NumPy arrays (scipy/sklearn output): a float32 spec casts them",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def survival_log_likelihood(p):
                return tf.reduce_sum(tf.math.log1p(-p))
            """
        },
        profiled="out = [m.survival_log_likelihood(tf.fill([n], 0.25)) for n in (3, 4, 5)]",
        unseen=(
            "m.survival_log_likelihood(np.full([4], 1 - 1e-9))",
            "m.survival_log_likelihood(tf.fill([7], 0.5))",
        ),
        hand=(
            (
                M,
                "    return tf.reduce_sum(tf.math.log1p(-p))\n",
                "    return tf.reduce_sum(tf.math.log1p(-p))\n\n\n"
                "survival_log_likelihood.get_concrete_function(tf.TensorSpec([None], tf.float32))\n",
            ),
        ),
    ),
    Case(
        name="python_dt_cast_float64",
        klass="21.2",
        origin="an ODE integrator on float64 state: tf.cast(dt, tf.float64) of a Python "
        "float step size. TensorFlow converts dt to float32 before the cast (0.1 becomes "
        "0.10000000149): a float32 spec keeps the values, a float64 one would change them",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def euler_step(state, dt):
                return state + tf.cast(dt, tf.float64) * tf.sin(state)
            """
        },
        setup="s = tf.constant([0.5, 1.0, 2.0], tf.float64)",
        profiled="out = [m.euler_step(s, dt) for dt in (0.1, 0.05, 0.01)]",
        unseen=("m.euler_step(s, 0.2)", "m.euler_step(s[:1], 0.1)"),
        hand=(signature(spec("[None]", "float64"), spec("[]")),),
    ),
    Case(
        name="step_times_prime_overflow",
        klass="21.2",
        origin="feature hashing salted by the global step (ids + step * 1000003) % buckets "
        "on int64 ids: int32 arithmetic overflows from step 2148",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def salted_buckets(ids, step):
                return (ids + step * 1000003) % 4096
            """
        },
        setup="ids = tf.constant([3, 17, 4095], tf.int64)",
        profiled="out = [m.salted_buckets(ids, step) for step in (1, 2, 3, 4)]",
        unseen=("m.salted_buckets(ids, 5000)", "m.salted_buckets(ids[:2], 7)"),
        hand=(signature(spec("[None]", "int64"), spec("[]", "int64")),),
    ),
    # ------------------------------------------------------------------------------ 21.3
    Case(
        name="huber_delta_ints_then_float",
        klass="21.3",
        origin="Huber loss with delta = tf.cast(delta, tf.float32): a short profile tried "
        "deltas 1, 2, 3; the next experiment uses 1.5",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def huber(y_true, y_pred, delta):
                delta = tf.cast(delta, tf.float32)
                err = tf.abs(y_true - y_pred)
                quad = tf.minimum(err, delta)
                return tf.reduce_mean(0.5 * quad ** 2 + delta * (err - quad))
            """
        },
        setup="y, p = tf.constant([0.0, 1.0, 4.0]), tf.constant([0.5, -1.0, 1.0])",
        profiled="out = [m.huber(y, p, d) for d in (1, 2, 3)]",
        unseen=("m.huber(y, p, 1.5)", "m.huber(y, p, 0.25)"),
        hand=(signature(spec("[None]"), spec("[None]"), spec("[]")),),
    ),
    Case(
        name="hinge_margin_ints_then_float",
        klass="21.3",
        origin="a hinge/contrastive loss with m = tf.cast(margin, score.dtype): the short "
        "profile tried margins 1, 2, 5; the tuned run passes 12.5",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def hinge(labels, scores, margin):
                m = tf.cast(margin, scores.dtype)
                return tf.reduce_mean(tf.maximum(0.0, m - labels * scores))
            """
        },
        setup="y, s = tf.constant([1.0, -1.0, 1.0]), tf.constant([3.0, -0.5, 20.0])",
        profiled="out = [m.hinge(y, s, k) for k in (1, 2, 5)]",
        unseen=("m.hinge(y, s, 12.5)", "m.hinge(y[:2], s[:2], 0.5)"),
        hand=(signature(spec("[None]"), spec("[None]"), spec("[]")),),
    ),
    Case(
        name="int32_ids_then_tf_data_int64",
        klass="21.3",
        origin="an embedding lookup profiled with int32 token ids; the input pipeline "
        "(tf.data.Dataset.range / from_tensor_slices of int64) later gives int64",
        files={
            M: """
            import tensorflow as tf

            embeddings = tf.Variable(tf.reshape(tf.range(40, dtype=tf.float32), [10, 4]))

            @tf.function
            def embed(ids):
                return tf.reduce_sum(tf.nn.embedding_lookup(embeddings, ids), axis=1)
            """
        },
        profiled="out = [m.embed(tf.ones([2, t], tf.int32) * t) for t in (2, 3, 4)]",
        unseen=(
            "m.embed(next(iter(tf.data.Dataset.range(9).batch(3).batch(2))))",
            "m.embed(tf.constant([[1, 2, 3, 4, 5]]))",
        ),
        hand=(
            (
                M,
                "    return tf.reduce_sum(tf.nn.embedding_lookup(embeddings, ids), axis=1)\n",
                "    return tf.reduce_sum(tf.nn.embedding_lookup(embeddings, ids), axis=1)\n\n\n"
                "embed.get_concrete_function(tf.TensorSpec([None, None], tf.int32))\n",
            ),
        ),
    ),
    Case(
        name="fpn_two_levels_then_three",
        klass="21.3",
        origin="feature-pyramid fusion over a list of levels: the profile saw 2 levels, "
        "another backbone gives 3",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def fuse_levels(features):
                pooled = [tf.reduce_mean(f, axis=[1, 2]) for f in features]
                return tf.add_n(pooled) / len(pooled)
            """
        },
        setup="def level(b, s, c=4): return tf.ones([b, s, s, c]) * s",
        profiled="out = [m.fuse_levels([level(b, 8), level(b, 4)]) for b in (1, 2, 3)]",
        unseen=(
            "m.fuse_levels([level(2, 8), level(2, 4), level(2, 2)])",
            "m.fuse_levels([level(5, 16), level(5, 8)])",
        ),
        hand=(
            (
                M,
                "    return tf.add_n(pooled) / len(pooled)\n",
                "    return tf.add_n(pooled) / len(pooled)\n\n\n"
                "fuse_levels.get_concrete_function(\n"
                "    [tf.TensorSpec([None, None, None, 4]), tf.TensorSpec([None, None, None, 4])]\n"
                ")\n",
            ),
        ),
    ),
    Case(
        name="attention_mask_never_passed",
        klass="21.3",
        origin="attention(q, k, v, mask=None) (Transformer tutorial): the profiled encoder "
        "never passed a mask; the decoder does",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def attention(q, k, v, mask=None):
                scores = tf.matmul(q, k, transpose_b=True) / 2.0
                if mask is not None:
                    scores += (1.0 - mask) * -1e9
                return tf.matmul(tf.nn.softmax(scores), v)
            """
        },
        setup="def qkv(t): x = tf.reshape(tf.range(2 * t * 4, dtype=tf.float32) / 9.0, [2, t, 4]); return x, x, x",
        profiled="out = [m.attention(*qkv(t)) for t in (2, 3, 4)]",
        unseen=(
            "m.attention(*qkv(3), mask=tf.linalg.band_part(tf.ones([3, 3]), -1, 0))",
            "m.attention(*qkv(5))",
        ),
        hand=(
            (
                M,
                "    return tf.matmul(tf.nn.softmax(scores), v)\n",
                "    return tf.matmul(tf.nn.softmax(scores), v)\n\n\n"
                "_QKV = tf.TensorSpec([None, None, 4])\n"
                "attention.get_concrete_function(_QKV, _QKV, _QKV)\n",
            ),
        ),
    ),
    Case(
        name="training_flag_never_passed",
        klass="21.3",
        origin="a Keras-style block __call__(x, training=False): the profile ran inference "
        "only; fine-tuning passes training=True",
        files={
            M: """
            import tensorflow as tf

            class ResidualBlock(tf.Module):
                def __init__(self, width):
                    super().__init__()
                    self.w = tf.Variable(tf.eye(width) * 0.5)

                @tf.function
                def __call__(self, x, training=False):
                    h = tf.nn.relu(x @ self.w)
                    if training:
                        h = h * 0.9
                    return x + h
            """
        },
        setup="block = m.ResidualBlock(3)",
        profiled="out = [block(tf.ones([n, 3]) * n) for n in (1, 2, 4)]",
        unseen=("block(tf.ones([3, 3]), training=True)", "block(tf.ones([5, 3]))"),
        hand=(
            (
                M,
                "        self.w = tf.Variable(tf.eye(width) * 0.5)\n",
                "        self.w = tf.Variable(tf.eye(width) * 0.5)\n"
                "        self.__call__.get_concrete_function(tf.TensorSpec([None, width]))\n",
            ),
        ),
    ),
    Case(
        name="dict_batch_extra_eval_key",
        klass="21.3",
        origin="a step over dict batches ({'image', 'label'}); the eval pipeline adds a "
        "'weight' key (sample weights)",
        files={
            M: """
            import tensorflow as tf

            w = tf.Variable([[0.5], [-0.25]])

            @tf.function
            def eval_step(batch):
                pred = batch["image"] @ w
                loss = tf.square(pred[:, 0] - batch["label"])
                if "weight" in batch:
                    loss = loss * batch["weight"]
                return tf.reduce_mean(loss)
            """
        },
        setup="def batch(n, **extra): return {'image': tf.ones([n, 2]) * n, 'label': tf.range(n, dtype=tf.float32), **extra}",
        profiled="out = [m.eval_step(batch(n)) for n in (2, 3, 4)]",
        unseen=(
            "m.eval_step(batch(3, weight=tf.constant([1.0, 0.0, 2.0])))",
            "m.eval_step(batch(6))",
        ),
        hand=(
            (
                M,
                "    return tf.reduce_mean(loss)\n",
                "    return tf.reduce_mean(loss)\n\n\n"
                "eval_step.get_concrete_function(\n"
                "    {'image': tf.TensorSpec([None, 2]), 'label': tf.TensorSpec([None])}\n"
                ")\n",
            ),
        ),
    ),
    Case(
        name="float32_instance_then_float64",
        klass="21.3",
        origin="a preprocessing tf.Module whose dtype comes from its statistics: profiled "
        "with a float32 instance; a float64 one (NumPy statistics) comes later",
        files={
            M: """
            import tensorflow as tf

            class Standardize(tf.Module):
                def __init__(self, mean, std):
                    super().__init__()
                    self.mean = tf.constant(mean)
                    self.std = tf.constant(std)

                @tf.function
                def __call__(self, x):
                    return (x - self.mean) / self.std
            """
        },
        setup="s32 = m.Standardize(np.float32([1.0, 2.0]), np.float32([2.0, 4.0]))",
        profiled="out = [s32(tf.ones([n, 2])) for n in (1, 2, 3)]",
        unseen=(
            "m.Standardize(np.array([1.0, 2.0]), np.array([2.0, 4.0]))(tf.ones([4, 2], tf.float64) / 3)",
            "s32(tf.ones([5, 2]))",
        ),
        hand=(
            (
                M,
                "        self.std = tf.constant(std)\n",
                "        self.std = tf.constant(std)\n"
                "        self.__call__.get_concrete_function(tf.TensorSpec([None, 2], self.mean.dtype))\n",
            ),
        ),
    ),
    Case(
        name="batched_then_single_observation",
        klass="21.3",
        origin="a linear value function profiled on batches of observations; the "
        "evaluation loop passes one observation (rank 1)",
        files={
            M: """
            import tensorflow as tf

            weights = tf.constant([0.5, -1.0, 0.25, 2.0])

            @tf.function
            def value(obs):
                return tf.reduce_sum(obs * weights, axis=-1)
            """
        },
        profiled="out = [m.value(tf.ones([n, 4]) * n) for n in (8, 16, 32)]",
        unseen=("m.value(tf.constant([1.0, 2.0, 3.0, 4.0]))", "m.value(tf.ones([5, 4]))"),
        hand=(
            (
                M,
                "    return tf.reduce_sum(obs * weights, axis=-1)\n",
                "    return tf.reduce_sum(obs * weights, axis=-1)\n\n\n"
                "value.get_concrete_function(tf.TensorSpec([None, 4]))\n",
            ),
        ),
    ),
    Case(
        name="small_seeds_then_large",
        klass="21.3",
        origin="per-example stateless dropout seeded by a dataset index hash: the profile "
        "saw seeds below 2**31, later files hash above it",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def seeded_dropout(x, seed):
                keep = tf.random.stateless_uniform(tf.shape(x), seed=[seed, 1]) > 0.3
                return tf.where(keep, x / 0.7, 0.0)
            """
        },
        profiled="out = [m.seeded_dropout(tf.ones([2, 4]), s) for s in (12345, 987654, 31337)]",
        unseen=(
            "m.seeded_dropout(tf.ones([2, 4]), 3_000_000_001)",
            "m.seeded_dropout(tf.ones([3, 4]), 5)",
        ),
        hand=(signature(spec("[None, 4]"), spec("[]", "int64")),),
    ),
    # ------------------------------------------------------------------------------ 21.4
    Case(
        name="project_layer_in_sequential",
        klass="21.4",
        origin="a project Keras layer flattening with tf.reshape(x, [x.shape[0], -1]) "
        "(pre-Keras-3 code), used inside keras.Sequential([...]) by a predict step",
        files={
            M: """
            import keras
            import tensorflow as tf

            class FlattenPatches(keras.layers.Layer):
                def call(self, x):
                    return tf.reshape(x, [x.shape[0], -1])

            model = keras.Sequential([FlattenPatches(), keras.layers.Dense(2, kernel_initializer="ones")])

            @tf.function
            def predict(images):
                return model(images)
            """
        },
        profiled="out = [m.predict(tf.ones([n, 2, 2]) * n) for n in (1, 2, 3, 4)]",
        unseen=("m.predict(tf.ones([6, 2, 2]))", "m.predict(tf.ones([2, 2, 2]) / 3)"),
    ),
    Case(
        name="loss_class_in_other_module",
        klass="21.4",
        origin="a project loss class in losses.py averaging over y_true.shape[0], imported "
        "by the training module (multi-module project)",
        files={
            M: """
            import tensorflow as tf

            from project_losses import SumOverBatch

            w = tf.Variable([[1.0], [2.0]])
            loss_fn = SumOverBatch()

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, x @ w)
                w.assign_sub(0.01 * tape.gradient(loss, w))
                return loss
            """,
            "project_losses.py": """
            import tensorflow as tf

            class SumOverBatch:
                def __call__(self, y_true, y_pred):
                    return tf.reduce_sum(tf.square(y_true - y_pred)) / y_true.shape[0]
            """,
        },
        profiled="out = [m.train_step(tf.ones([n, 2]), tf.ones([n, 1]) * n) for n in (2, 3, 4)]",
        unseen=(
            "m.train_step(tf.ones([5, 2]), tf.zeros([5, 1]))",
            "m.train_step(tf.ones([3, 2]), tf.ones([3, 1]))",
        ),
        hand=(
            signature(spec("[None, 2]"), spec("[None, 1]")),
            (
                "project_losses.py",
                "/ y_true.shape[0]",
                "/ tf.cast(tf.shape(y_true)[0], y_pred.dtype)",
            ),
        ),
    ),
    Case(
        name="imported_staticmethod_pairwise",
        klass="21.4",
        origin="point-cloud code calling Geometry.pairwise(points), a @staticmethod of a "
        "class imported from geometry.py that reshapes to [n, 1, -1] with n = points.shape[0]",
        files={
            M: """
            import tensorflow as tf

            from point_geometry import Geometry

            @tf.function
            def nearest_distance(points):
                d = Geometry.pairwise(points)
                d += tf.eye(tf.shape(points)[0]) * 1e9
                return tf.reduce_min(d, axis=1)
            """,
            "point_geometry.py": """
            import tensorflow as tf

            class Geometry:
                @staticmethod
                def pairwise(points):
                    n = points.shape[0]
                    diff = tf.reshape(points, [n, 1, -1]) - tf.reshape(points, [1, n, -1])
                    return tf.norm(diff, axis=-1)
            """,
        },
        setup="def cloud(n): return tf.reshape(tf.range(n * 3, dtype=tf.float32) ** 1.5, [n, 3])",
        profiled="out = [m.nearest_distance(cloud(n)) for n in (3, 4, 5)]",
        unseen=("m.nearest_distance(cloud(7))", "m.nearest_distance(cloud(2))"),
        hand=(
            signature(spec("[None, 3]")),
            ("point_geometry.py", "n = points.shape[0]", "n = tf.shape(points)[0]"),
        ),
    ),
    Case(
        name="map_fn_body_reads_length",
        klass="21.4",
        origin="per-example normalisation through tf.map_fn whose body divides by "
        "example.shape[0] (the sequence length)",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def normalise_rows(batch):
                def per_example(example):
                    return example / example.shape[0]
                return tf.map_fn(per_example, batch)
            """
        },
        profiled="out = [m.normalise_rows(tf.ones([2, t]) * t) for t in (2, 3, 4)]",
        unseen=("m.normalise_rows(tf.ones([3, 6]))", "m.normalise_rows(tf.ones([1, 2]))"),
        hand=(
            signature(spec("[None, None]")),
            (
                M,
                "example / example.shape[0]",
                "example / tf.cast(tf.shape(example)[0], example.dtype)",
            ),
        ),
    ),
    Case(
        name="keras_ops_unstack_time",
        klass="21.4",
        origin="a hand-rolled recurrence over keras.ops.unstack(x, axis=1) (Keras 3 "
        "backend-agnostic code): unstack needs the static number of steps",
        files={
            M: """
            import keras
            import tensorflow as tf

            @tf.function
            def running_state(x):
                state = keras.ops.zeros_like(x[:, 0])
                for step in keras.ops.unstack(x, axis=1):
                    state = 0.5 * state + step
                return state
            """
        },
        profiled="out = [m.running_state(tf.ones([2, t]) * t) for t in (2, 3, 4)]",
        unseen=("m.running_state(tf.ones([2, 6]))", "m.running_state(tf.ones([4, 1]))"),
    ),
    Case(
        name="rl_actor_in_attribute_tiles",
        klass="21.4",
        origin="an RL agent (tf2rl-style) holding a project keras.Model in self.actor whose "
        "call tiles log_std to states.shape[0]; act() sees a varying number of envs",
        files={
            M: """
            import keras
            import tensorflow as tf

            class GaussianActor(keras.Model):
                def __init__(self, action_dim):
                    super().__init__()
                    self.mean = keras.layers.Dense(action_dim, kernel_initializer="ones")
                    self.log_std = tf.Variable(tf.fill([action_dim], -0.5))

                def call(self, states):
                    mean = self.mean(states)
                    log_std = tf.tile(self.log_std[None, :], [states.shape[0], 1])
                    return mean, log_std

            class Agent:
                def __init__(self):
                    self.actor = GaussianActor(2)

                @tf.function
                def act(self, states):
                    mean, log_std = self.actor(states)
                    return mean + tf.exp(log_std)
            """
        },
        setup="agent = m.Agent()",
        profiled="out = [agent.act(tf.ones([n, 3]) * n) for n in (1, 2, 4)]",
        unseen=(
            "agent.act(tf.ones([3, 3]))",
            "(lambda other: other.act(tf.ones([5, 3])))(m.Agent())",
        ),
        hand=(
            signature(spec("[None, 3]"), decorator="    @tf.function\n"),
            (M, "[states.shape[0], 1]", "[tf.shape(states)[0], 1]"),
            (
                M,
                "        self.actor = GaussianActor(2)\n",
                "        self.actor = GaussianActor(2)\n        self.actor(tf.zeros([1, 3]))\n",
            ),
        ),
    ),
    Case(
        name="functional_model_crop_layer",
        klass="21.4",
        origin="a project layer in a functional model that crops time to a multiple of 4 "
        "when the length is known (t = x.shape[1]; if t is None: return x)",
        files={
            M: """
            import keras
            import tensorflow as tf

            class CropToMultiple(keras.layers.Layer):
                def call(self, x):
                    t = x.shape[1]
                    if t is None:
                        return x
                    return x[:, : t - t % 4]

            inputs = keras.Input((None, 2))
            pooled = keras.layers.GlobalAveragePooling1D()(CropToMultiple()(inputs))
            encoder = keras.Model(inputs, pooled)

            @tf.function
            def encode(x):
                return encoder(x)
            """
        },
        setup="def seq(t): return tf.reshape(tf.range(2 * t * 2, dtype=tf.float32), [2, t, 2])",
        profiled="out = [m.encode(seq(t)) for t in (5, 6, 7)]",
        unseen=("m.encode(seq(9))", "m.encode(seq(4))"),
    ),
    Case(
        name="vectorized_map_resize",
        klass="21.4",
        origin="per-image downscaling with tf.vectorized_map, the size taken from the "
        "element's static shape (img.shape[0] // 2)",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def half_size(images):
                def shrink(img):
                    return tf.image.resize(img, [img.shape[0] // 2, img.shape[1] // 2])
                return tf.vectorized_map(shrink, images)
            """
        },
        setup="def imgs(b, s): return tf.reshape(tf.range(b * s * s, dtype=tf.float32), [b, s, s, 1])",
        profiled="out = [m.half_size(imgs(2, s)) for s in (4, 6, 8)]",
        unseen=("m.half_size(imgs(1, 10))", "m.half_size(imgs(3, 4))"),
    ),
    Case(
        name="pooler_object_in_attribute",
        klass="21.4",
        origin="a plain project class bound in __init__ (self.pooler = MeanPooler()) whose "
        "method divides by x.shape[1]; the tf.Module's call reaches it through the attribute",
        files={
            M: """
            import tensorflow as tf

            class MeanPooler:
                def pool(self, x):
                    return tf.reduce_sum(x, axis=1) / x.shape[1]

            class SentenceEncoder(tf.Module):
                def __init__(self):
                    super().__init__()
                    self.pooler = MeanPooler()

                @tf.function
                def __call__(self, token_vectors):
                    return self.pooler.pool(token_vectors)
            """
        },
        setup="enc = m.SentenceEncoder()",
        profiled="out = [enc(tf.ones([2, t, 3]) * t) for t in (3, 4, 5)]",
        unseen=("enc(tf.ones([2, 8, 3]))", "m.SentenceEncoder()(tf.ones([1, 2, 3]))"),
        hand=(
            signature(spec("[None, None, 3]"), decorator="    @tf.function\n"),
            (M, "/ x.shape[1]", "/ tf.cast(tf.shape(x)[1], x.dtype)"),
        ),
    ),
    Case(
        name="contrastive_loss_class_attribute",
        klass="21.4",
        origin="a SimCLR-style trainer with its loss object as a class attribute "
        "(loss_fn = ContrastiveLoss()); the loss builds labels = tf.range(a.shape[0])",
        files={
            M: """
            import tensorflow as tf

            class ContrastiveLoss:
                def __call__(self, a, b):
                    logits = a @ tf.transpose(b)
                    labels = tf.range(a.shape[0])
                    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
                    return tf.reduce_mean(losses)

            class SimCLRTrainer(tf.Module):
                loss_fn = ContrastiveLoss()

                @tf.function
                def __call__(self, a, b):
                    return self.loss_fn(a, b)
            """
        },
        setup="""
            trainer = m.SimCLRTrainer()
            def views(n): x = tf.reshape(tf.range(n * 4, dtype=tf.float32) % 5, [n, 4]); return x, x[::-1]
        """,
        profiled="out = [trainer(*views(n)) for n in (4, 6, 8)]",
        unseen=("trainer(*views(5))", "m.SimCLRTrainer()(*views(3))"),
        hand=(
            signature(spec("[None, 4]"), spec("[None, 4]"), decorator="    @tf.function\n"),
            (M, "tf.range(a.shape[0])", "tf.range(tf.shape(a)[0])"),
        ),
    ),
    # ------------------------------------------------------------------------------ 21.5
    Case(
        name="word2vec_nce_loss",
        klass="21.5",
        origin="word2vec (TensorFlow's old tutorial): tf.nn.nce_loss draws negative samples "
        "with a stateful candidate sampler; the last batch of an epoch is smaller",
        files={
            M: """
            import tensorflow as tf

            VOCAB, DIM = 50, 4
            embeddings = tf.Variable(tf.random.stateless_uniform([VOCAB, DIM], seed=[1, 2]))
            nce_w = tf.Variable(tf.random.stateless_normal([VOCAB, DIM], seed=[3, 4]))
            nce_b = tf.Variable(tf.zeros([VOCAB]))

            @tf.function
            def nce_batch_loss(inputs, labels):
                embed = tf.nn.embedding_lookup(embeddings, inputs)
                losses = tf.nn.nce_loss(nce_w, nce_b, labels, embed, num_sampled=5, num_classes=VOCAB)
                return tf.reduce_mean(losses)
            """
        },
        setup="def batch(n): return tf.range(n) % 50, tf.reshape(tf.range(n, dtype=tf.int64) * 7 % 50, [n, 1])",
        profiled="out = [m.nce_batch_loss(*batch(n)) for n in (8, 8, 5, 8, 3)]",
        unseen=(
            "m.nce_batch_loss(*batch(8))",
            "m.nce_batch_loss(*batch(6))",
            "m.nce_batch_loss(*batch(8))",
        ),
        random="exact values under keras.utils.set_random_seed: the sampler's stream must "
        "continue as in the original (a fix that traces less changes it)",
    ),
    Case(
        name="inception_distorted_crop",
        klass="21.5",
        origin="Inception/ResNet preprocessing: tf.image.sample_distorted_bounding_box "
        "(stateful, with a fixed op seed for reproducibility) on images of different sizes",
        files={
            M: """
            import tensorflow as tf

            WHOLE = tf.constant([[[0.0, 0.0, 1.0, 1.0]]])

            @tf.function
            def distorted_crop(image):
                begin, size, _ = tf.image.sample_distorted_bounding_box(
                    tf.shape(image), bounding_boxes=WHOLE, min_object_covered=0.1, seed=7
                )
                return tf.slice(image, begin, size)
            """
        },
        setup="def img(h, w): return tf.reshape(tf.range(h * w * 3, dtype=tf.float32), [h, w, 3])",
        profiled="out = [m.distorted_crop(img(h, w)) for h, w in ((8, 8), (10, 6), (8, 8))]",
        unseen=(
            "m.distorted_crop(img(8, 8))",
            "m.distorted_crop(img(12, 9))",
            "m.distorted_crop(img(10, 6))",
        ),
        random="exact values (crops): the op's own seed=7 makes each trace's sampler start "
        "the same stream (TF 2's default seed=0 draws a nondeterministic one, which no "
        "comparison could use); fewer traces continue one stream instead of restarting it",
    ),
    Case(
        name="gaussian_noise_project_layer",
        klass="21.5",
        origin="a project Keras layer adding tf.random.normal noise (denoising autoencoder "
        "tutorial style), called from a tf.function train-time augmentation",
        files={
            M: """
            import keras
            import tensorflow as tf

            class GaussianNoise(keras.layers.Layer):
                def call(self, x):
                    return x + tf.random.normal(tf.shape(x), stddev=0.1)

            noise = GaussianNoise()

            @tf.function
            def corrupt(batch):
                return tf.clip_by_value(noise(batch), 0.0, 1.0)
            """
        },
        profiled="out = [m.corrupt(tf.fill([n, 3], 0.5)) for n in (4, 4, 2, 3)]",
        unseen=("m.corrupt(tf.fill([4, 3], 0.5))", "m.corrupt(tf.fill([5, 3], 0.5))"),
        random="exact values under a fixed seed: the noise stream must continue as in the original",
    ),
    Case(
        name="uniform_in_imported_helper",
        klass="21.5",
        origin="a mixup/cutout-style helper in augment_ops.py drawing tf.random.uniform, "
        "called by the step in model.py",
        files={
            M: """
            import tensorflow as tf

            from augment_ops import random_mix

            @tf.function
            def mix_batch(x):
                return random_mix(x, x[::-1])
            """,
            "augment_ops.py": """
            import tensorflow as tf

            def random_mix(a, b):
                lam = tf.random.uniform([tf.shape(a)[0], 1])
                return lam * a + (1.0 - lam) * b
            """,
        },
        setup="def xs(n): return tf.reshape(tf.range(n * 2, dtype=tf.float32), [n, 2])",
        profiled="out = [m.mix_batch(xs(n)) for n in (4, 3, 4, 2)]",
        unseen=("m.mix_batch(xs(4))", "m.mix_batch(xs(6))"),
        random="exact values under a fixed seed: the uniform stream must continue as in the original",
    ),
    Case(
        name="shuffle_negatives_helper",
        klass="21.5",
        origin="in-batch negatives for a retrieval model: a helper shuffles the batch with "
        "tf.random.shuffle (stateful) to pair queries with random documents",
        files={
            M: """
            import tensorflow as tf

            def shuffled(x):
                return tf.random.shuffle(x)

            @tf.function
            def negative_scores(queries, docs):
                return tf.reduce_sum(queries * shuffled(docs), axis=-1)
            """
        },
        setup="def emb(n): return tf.reshape(tf.range(n * 3, dtype=tf.float32), [n, 3])",
        profiled="out = [m.negative_scores(emb(n), emb(n) / 2) for n in (4, 4, 5, 3)]",
        unseen=("m.negative_scores(emb(4), emb(4))", "m.negative_scores(emb(6), emb(6))"),
        random="exact values under a fixed seed: the shuffle's stream must continue as in the "
        "original",
    ),
    Case(
        name="keras_dropout_seed_generator",
        klass="21.5",
        origin="a Keras 3 Dropout layer in a project Sequential, called with training=True "
        "from a tf.function: Keras draws statelessly from a SeedGenerator variable, so the "
        "trace count does not move its stream (a signature keeps every value)",
        files={
            M: """
            import keras
            import tensorflow as tf

            model = keras.Sequential([
                keras.Input((4,)),
                keras.layers.Dense(4, kernel_initializer="ones"),
                keras.layers.Dropout(0.5, seed=7),
            ])

            @tf.function
            def noisy_features(x):
                return model(x, training=True)
            """
        },
        profiled="out = [m.noisy_features(tf.ones([n, 4])) for n in (2, 3, 2, 4)]",
        unseen=("m.noisy_features(tf.ones([5, 4]))", "m.noisy_features(tf.ones([2, 4]))"),
        random="exact values under a fixed seed: Keras 3's SeedGenerator state advances per "
        "call, not per trace, so a fix keeps the stream",
        hand=(signature(spec("[None, 4]")),),
    ),
    # -------------------------------------------------------------------------------- 22
    Case(
        name="global_rebound_by_setter",
        klass="22",
        origin="a sampling temperature in a module global, changed through "
        "set_temperature() between phases; the traced code reads it",
        files={
            M: """
            import tensorflow as tf

            TEMPERATURE = 1.0

            def set_temperature(value):
                global TEMPERATURE
                TEMPERATURE = value

            @tf.function
            def sharpen(logits):
                return tf.nn.softmax(logits / TEMPERATURE)
            """
        },
        setup="def logits(n): return tf.reshape(tf.range(n * 3, dtype=tf.float32), [n, 3])",
        profiled="out = [m.sharpen(logits(n)) for n in (1, 2, 3)]",
        unseen=("(m.set_temperature(4.0), m.sharpen(logits(5)))[1]", "m.sharpen(logits(6))"),
    ),
    Case(
        name="global_phase_from_driver",
        klass="22",
        origin="a training driver switching model.PHASE from 'warmup' to 'train'; the "
        "traced loss scales a term by phase",
        files={
            M: """
            import tensorflow as tf

            PHASE = "warmup"

            @tf.function
            def regularised_loss(pred, target):
                loss = tf.reduce_mean(tf.square(pred - target))
                weight = 0.0 if PHASE == "warmup" else 0.1
                return loss + weight * tf.reduce_sum(tf.abs(pred))
            """
        },
        profiled="out = [m.regularised_loss(tf.ones([n]), tf.zeros([n])) for n in (2, 3, 4)]",
        unseen=(
            "(setattr(m, 'PHASE', 'train'), m.regularised_loss(tf.ones([5]), tf.zeros([5])))[1]",
            "m.regularised_loss(tf.ones([7]), tf.zeros([7]))",
        ),
    ),
    Case(
        name="config_dict_alias_scheduler",
        klass="22",
        origin="a policy holding self.config = CONFIG (a module dict) whose noise scale a "
        "scheduler changes between epochs",
        files={
            M: """
            import tensorflow as tf

            CONFIG = {"noise_scale": 0.0}

            def schedule(epoch):
                CONFIG["noise_scale"] = 0.1 * epoch

            class Policy(tf.Module):
                def __init__(self):
                    super().__init__()
                    self.config = CONFIG

                @tf.function
                def __call__(self, obs):
                    return tf.tanh(obs) + self.config["noise_scale"]
            """
        },
        setup="policy = m.Policy()",
        profiled="out = [policy(tf.ones([n, 2])) for n in (1, 2, 3)]",
        unseen=("(m.schedule(3), policy(tf.ones([4, 2])))[1]", "policy(tf.ones([6, 2]))"),
    ),
    Case(
        name="settings_threshold_from_driver",
        klass="22",
        origin="a detector reading self.settings.threshold (a settings object the driver "
        "edits when tuning precision/recall)",
        files={
            M: """
            import tensorflow as tf

            class Settings:
                def __init__(self):
                    self.threshold = 0.5

            class Detector(tf.Module):
                def __init__(self, settings):
                    super().__init__()
                    self.settings = settings

                @tf.function
                def __call__(self, scores):
                    return tf.cast(scores > self.settings.threshold, tf.int32)
            """
        },
        setup="settings = m.Settings(); detector = m.Detector(settings)",
        profiled="out = [detector(tf.linspace(0.0, 1.0, n)) for n in (3, 4, 5)]",
        unseen=(
            "(setattr(settings, 'threshold', 0.8), detector(tf.linspace(0.0, 1.0, 6)))[1]",
            "detector(tf.linspace(0.0, 1.0, 7))",
        ),
    ),
    Case(
        name="config_module_attribute",
        klass="22",
        origin="hyperparameters in a project module (import hparams; hparams.LABEL_SMOOTHING) "
        "that the driver changes for fine-tuning",
        files={
            M: """
            import tensorflow as tf

            import hparams

            @tf.function
            def smoothed_targets(onehot):
                eps = hparams.LABEL_SMOOTHING
                uniform = tf.reduce_mean(onehot, axis=-1, keepdims=True)
                return onehot * (1.0 - eps) + eps * uniform
            """,
            "hparams.py": """
            LABEL_SMOOTHING = 0.0
            """,
        },
        setup="import hparams",
        profiled="out = [m.smoothed_targets(tf.one_hot(tf.range(n) % 3, 3)) for n in (2, 3, 4)]",
        unseen=(
            "(setattr(hparams, 'LABEL_SMOOTHING', 0.2), "
            "m.smoothed_targets(tf.one_hot(tf.range(5) % 3, 3)))[1]",
            "m.smoothed_targets(tf.one_hot(tf.range(6) % 3, 3))",
        ),
    ),
    Case(
        name="per_call_function_reads_config",
        klass="22",
        origin="a trainer creating its tf.function per call (AS106) that reads "
        "self.config, an alias of a module dict a scheduler changes: caching the "
        "function per instance would freeze the value",
        files={
            M: """
            import tensorflow as tf

            HPARAMS = {"scale": 1.0}

            class Trainer:
                def __init__(self):
                    self.config = HPARAMS

                def step(self, x):
                    @tf.function
                    def scaled(v):
                        return v * self.config["scale"]
                    return scaled(x)
            """
        },
        setup="trainer = m.Trainer()",
        profiled="out = [trainer.step(tf.ones([2])) for _ in range(3)]",
        unseen=("(m.HPARAMS.update(scale=3.0), trainer.step(tf.ones([2])))[1]",),
    ),
    # the same Python state, changed by a driver that is a file of the project (the
    # issue's "rebound elsewhere in the project"): the project-writes scan sees it
    Case(
        name="global_phase_from_project_driver",
        klass="22",
        origin="global_phase_from_driver with the phase switch in the project's train.py "
        "(start_training() sets model.PHASE)",
        files={
            M: """
            import tensorflow as tf

            PHASE = "warmup"

            @tf.function
            def regularised_loss(pred, target):
                loss = tf.reduce_mean(tf.square(pred - target))
                weight = 0.0 if PHASE == "warmup" else 0.1
                return loss + weight * tf.reduce_sum(tf.abs(pred))
            """,
            "train.py": """
            import model

            def start_training():
                model.PHASE = "train"
            """,
        },
        setup=DRIVER,
        profiled="out = [m.regularised_loss(tf.ones([n]), tf.zeros([n])) for n in (2, 3, 4)]",
        unseen=(
            "(train.start_training(), m.regularised_loss(tf.ones([5]), tf.zeros([5])))[1]",
            "m.regularised_loss(tf.ones([7]), tf.zeros([7]))",
        ),
    ),
    Case(
        name="settings_threshold_from_project_driver",
        klass="22",
        origin="settings_threshold_from_driver with the tuning in the project's train.py "
        "(tune(settings) sets settings.threshold)",
        files={
            M: """
            import tensorflow as tf

            class Settings:
                def __init__(self):
                    self.threshold = 0.5

            class Detector(tf.Module):
                def __init__(self, settings):
                    super().__init__()
                    self.settings = settings

                @tf.function
                def __call__(self, scores):
                    return tf.cast(scores > self.settings.threshold, tf.int32)
            """,
            "train.py": """
            def tune(settings):
                settings.threshold = 0.8
            """,
        },
        setup=DRIVER + "settings = m.Settings(); detector = m.Detector(settings)\n",
        profiled="out = [detector(tf.linspace(0.0, 1.0, n)) for n in (3, 4, 5)]",
        unseen=(
            "(train.tune(settings), detector(tf.linspace(0.0, 1.0, 6)))[1]",
            "detector(tf.linspace(0.0, 1.0, 7))",
        ),
    ),
    Case(
        name="config_module_attribute_from_project_driver",
        klass="22",
        origin="config_module_attribute with the fine-tuning switch in the project's "
        "train.py (hparams.LABEL_SMOOTHING = 0.2)",
        files={
            M: """
            import tensorflow as tf

            import hparams

            @tf.function
            def smoothed_targets(onehot):
                eps = hparams.LABEL_SMOOTHING
                uniform = tf.reduce_mean(onehot, axis=-1, keepdims=True)
                return onehot * (1.0 - eps) + eps * uniform
            """,
            "hparams.py": """
            LABEL_SMOOTHING = 0.0
            """,
            "train.py": """
            import hparams

            def fine_tune():
                hparams.LABEL_SMOOTHING = 0.2
            """,
        },
        setup=DRIVER,
        profiled="out = [m.smoothed_targets(tf.one_hot(tf.range(n) % 3, 3)) for n in (2, 3, 4)]",
        unseen=(
            "(train.fine_tune(), m.smoothed_targets(tf.one_hot(tf.range(5) % 3, 3)))[1]",
            "m.smoothed_targets(tf.one_hot(tf.range(6) % 3, 3))",
        ),
    ),
    Case(
        name="per_call_function_config_from_project_scheduler",
        klass="22",
        origin="per_call_function_reads_config with the schedule in the project's "
        "train.py (from model import HPARAMS; HPARAMS.update(...))",
        files={
            M: """
            import tensorflow as tf

            HPARAMS = {"scale": 1.0}

            class Trainer:
                def __init__(self):
                    self.config = HPARAMS

                def step(self, x):
                    @tf.function
                    def scaled(v):
                        return v * self.config["scale"]
                    return scaled(x)
            """,
            "train.py": """
            from model import HPARAMS

            def schedule(epoch):
                HPARAMS.update(scale=1.0 + epoch)
            """,
        },
        setup=DRIVER + "trainer = m.Trainer()\n",
        profiled="out = [trainer.step(tf.ones([2])) for _ in range(3)]",
        unseen=("(train.schedule(2), trainer.step(tf.ones([2])))[1]",),
    ),
    # ------------------------------------------------------------------------ precision
    Case(
        name="deepdream_module",
        klass="precision",
        known=(
            "left unfixed: img's dimensions 0-1 are called read because calc_loss iterates "
            "over the model's outputs (`activations`), and tape.watch/the model count as "
            "outside code"
        ),
        origin="TensorFlow's DeepDream tutorial: a tf.Module __call__(img, steps, step_size) "
        "with tape.watch(img) over a conv feature model (3 input channels), called per octave",
        files={
            M: """
            import tensorflow as tf

            def calc_loss(img, model):
                activations = model(tf.expand_dims(img, axis=0))
                return tf.reduce_sum([tf.reduce_mean(act) for act in activations])

            class DeepDream(tf.Module):
                def __init__(self, model):
                    super().__init__()
                    self.model = model

                @tf.function
                def __call__(self, img, steps, step_size):
                    loss = tf.constant(0.0)
                    for _ in tf.range(steps):
                        with tf.GradientTape() as tape:
                            tape.watch(img)
                            loss = calc_loss(img, self.model)
                        gradients = tape.gradient(loss, img)
                        gradients /= tf.math.reduce_std(gradients) + 1e-8
                        img = tf.clip_by_value(img + gradients * step_size, -1, 1)
                    return loss, img
            """
        },
        setup="""
            def features():
                inputs = keras.Input(shape=(None, None, 3))
                first = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
                second = keras.layers.Conv2D(4, 3, activation="relu")(first)
                return keras.Model(inputs, [first, second])

            def image(h, w, c=3):
                return tf.sin(tf.reshape(tf.range(h * w * c, dtype=tf.float32), [h, w, c]))

            dream = m.DeepDream(features())
        """,
        profiled="out = [dream(image(8 + k, 9 + k), 1 + k % 2, 0.01 * (1 + k)) for k in range(4)]",
        unseen=(
            "dream(image(16, 12), 3, 0.015)",
            "m.DeepDream(features())(image(7, 7), 2, 0.02)",
        ),
        rejected=("dream(image(8, 8, 4), 1, 0.01)",),
        hand=(
            signature(
                spec("[None, None, 3]"),
                spec("[]", "int32"),
                spec("[]"),
                decorator="    @tf.function\n",
            ),
        ),
    ),
    Case(
        name="quickstart_loss_object_step",
        klass="precision",
        known=(
            "partly (2 traces, the hand fix 1): the harness's calls are no evidence of the "
            "domain (not from a tf.data loop in the project), and the seeding would be the "
            "module's first TensorFlow work: reduce_retracing=True, the safe default, not a"
            " signature (issue 21)"
        ),
        origin="TensorFlow 2 quickstart for experts: train_step(images, labels) with "
        "loss_object(labels, predictions), an optimizer and a Mean metric; the last batch "
        "of each epoch is smaller",
        files={
            M: """
            import keras
            import tensorflow as tf

            model = keras.Sequential([
                keras.Input((6, 6)),
                keras.layers.Flatten(),
                keras.layers.Dense(8, activation="relu"),
                keras.layers.Dense(3),
            ])
            loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            optimizer = keras.optimizers.Adam(0.01)
            train_loss = keras.metrics.Mean(name="train_loss")

            @tf.function
            def train_step(images, labels):
                with tf.GradientTape() as tape:
                    predictions = model(images, training=True)
                    loss = loss_object(labels, predictions)
                gradients = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(gradients, model.trainable_variables))
                train_loss(loss)
                return loss
            """
        },
        setup="""
            def batch(n):
                x = tf.reshape(tf.range(n * 36, dtype=tf.float32) % 7 / 7.0, [n, 6, 6])
                return x, tf.range(n, dtype=tf.int64) % 3
        """,
        profiled="out = [m.train_step(*batch(n)) for n in (8, 8, 5, 8, 8, 5)]",
        unseen=("m.train_step(*batch(3))", "m.train_step(*batch(8))", "m.train_loss.result()"),
        hand=(
            signature(spec("[None, 6, 6]"), spec("[None]", "int64")),
            (
                M,
                "optimizer = keras.optimizers.Adam(0.01)\n",
                "optimizer = keras.optimizers.Adam(0.01)\noptimizer.build(model.trainable_variables)\n",
            ),
        ),
    ),
    Case(
        name="fgsm_adapter",
        klass="precision",
        origin="a model-agnostic FGSM adapter (cleverhans/TF adversarial tutorial shape) "
        "around a 28x28x1 classifier; a second adapter wraps a 32x32x3 classifier",
        files={
            M: """
            import keras
            import tensorflow as tf

            class FGSM:
                def __init__(self, model, epsilon):
                    self.model = model
                    self.epsilon = epsilon
                    self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

                @tf.function
                def __call__(self, images, labels):
                    with tf.GradientTape() as tape:
                        tape.watch(images)
                        loss = self.loss_fn(labels, self.model(images))
                    gradient = tape.gradient(loss, images)
                    return tf.clip_by_value(images + self.epsilon * tf.sign(gradient), 0.0, 1.0)
            """
        },
        setup="""
            def classifier(h, c):
                return keras.Sequential([
                    keras.Input((h, h, c)),
                    keras.layers.Conv2D(2, 3, strides=2),
                    keras.layers.Flatten(),
                    keras.layers.Dense(10),
                ])

            def batch(n, h=28, c=1):
                x = tf.reshape(tf.range(n * h * h * c, dtype=tf.float32) % 11 / 11.0, [n, h, h, c])
                return x, tf.range(n, dtype=tf.int64) % 10

            attack = m.FGSM(classifier(28, 1), 0.1)
        """,
        profiled="out = [attack(*batch(n)) for n in (4, 2, 3, 4)]",
        unseen=("attack(*batch(5))", "m.FGSM(classifier(32, 3), 0.05)(*batch(2, 32, 3))"),
        rejected=("attack(*batch(2, 32, 3))",),
        hand=(
            (
                M,
                "        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n",
                "        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n"
                "        self.__call__.get_concrete_function(\n"
                "            tf.TensorSpec((None, *model.input_shape[1:])), tf.TensorSpec([None], tf.int64)\n"
                "        )\n",
            ),
        ),
    ),
    Case(
        name="discounted_returns_tensor_array",
        klass="precision",
        known=(
            "partly (2 traces, the hand fix 1): no evidence of the domain (calls from the h"
            "arness), so reduce_retracing=True with the tf.shape rewrite, not a signature ("
            "issue 21)"
        ),
        origin="RL discounted returns over episodes of different lengths: a TensorArray of "
        "size rewards.shape[0] filled in a tf.range loop (the tf.shape rewrite's pattern)",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def discounted_returns(rewards):
                returns = tf.TensorArray(tf.float32, size=rewards.shape[0])
                running = tf.zeros_like(rewards[0])
                for t in tf.range(rewards.shape[0]):
                    running = rewards[t] + 0.9 * running
                    returns = returns.write(t, running)
                return returns.stack()
            """
        },
        setup="def episode(t): return tf.reshape(tf.range(t * 2, dtype=tf.float32) % 3, [t, 2])",
        profiled="out = [m.discounted_returns(episode(t)) for t in (3, 5, 4, 6)]",
        unseen=("m.discounted_returns(episode(9))", "m.discounted_returns(episode(1))"),
        hand=(
            signature(spec("[None, 2]")),
            (M, "size=rewards.shape[0]", "size=tf.shape(rewards)[0]"),
            (M, "tf.range(rewards.shape[0])", "tf.range(tf.shape(rewards)[0])"),
        ),
    ),
    Case(
        name="keras_predict_batch_sizes",
        klass="precision",
        origin="a custom predict step over a keras.Sequential of Dense layers (Keras "
        "'writing a training loop from scratch'); batches of every size",
        files={
            M: """
            import keras
            import tensorflow as tf

            model = keras.Sequential([
                keras.Input((4,)),
                keras.layers.Dense(8, activation="relu"),
                keras.layers.Dense(1),
            ])

            @tf.function
            def predict_step(x):
                return model(x, training=False)
            """
        },
        profiled="out = [m.predict_step(tf.ones([n, 4]) * n) for n in (32, 32, 7, 16, 3)]",
        unseen=("m.predict_step(tf.ones([5, 4]))", "m.predict_step(tf.ones([64, 4]) / 2)"),
        hand=(signature(spec("[None, 4]")),),
    ),
    Case(
        name="python_float_lr_step",
        klass="precision",
        known=(
            "left unfixed: the signature would narrow the tensor parameters' domain with no"
            " evidence of it (calls from the harness), a Python `lr` beside them rules out "
            "a guarded trace, and the call sites are outside the project, so no tf.constant"
            " there (issue 21)"
        ),
        origin="a hand-written linear-regression step (TF basics guide) with a Python "
        "float learning rate from a step schedule",
        files={
            M: """
            import tensorflow as tf

            w = tf.Variable([[0.1], [0.2]])
            b = tf.Variable(0.0)

            @tf.function
            def train_step(x, y, lr):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(x @ w + b - y))
                dw, db = tape.gradient(loss, [w, b])
                w.assign_sub(lr * dw)
                b.assign_sub(lr * db)
                return loss
            """
        },
        setup="x, y = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 1.0]]), tf.constant([[1.0], [2.0], [0.5]])",
        profiled="out = [m.train_step(x, y, lr) for lr in (0.01, 0.01, 0.005, 0.0025, 0.00125)]",
        unseen=("m.train_step(x, y, 0.02)", "m.train_step(x[:2], y[:2], 0.01)"),
        hand=(signature(spec("[None, 2]"), spec("[None, 1]"), spec("[]")),),
    ),
    Case(
        name="int_steps_in_tf_range",
        klass="precision",
        known=(
            "left unfixed: the signature would narrow the image's domain with no evidence o"
            "f it (calls from the harness), the Python `steps` rules out a guarded trace, a"
            "nd the call sites are outside the project (issue 21)"
        ),
        origin="an iterative smoother (DeepDream's run_deep_dream_simple shape) taking the "
        "number of steps as a Python int used only in tf.range",
        files={
            M: """
            import tensorflow as tf

            @tf.function
            def diffuse(field, steps):
                for _ in tf.range(steps):
                    field = 0.5 * field + 0.25 * (tf.roll(field, 1, 0) + tf.roll(field, -1, 0))
                return field
            """
        },
        setup="f = tf.constant([0.0, 1.0, 0.0, 0.0, 4.0])",
        profiled="out = [m.diffuse(f, s) for s in (1, 2, 3, 5)]",
        unseen=("m.diffuse(f, 10)", "m.diffuse(f[:3], 0)"),
        hand=(signature(spec("[None]"), spec("[]", "int32")),),
    ),
    Case(
        name="module_dense_other_instances",
        klass="precision",
        origin="the 'Introduction to modules' guide's Dense(tf.Module) with a "
        "@tf.function __call__; instances of other widths share the method",
        files={
            M: """
            import tensorflow as tf

            class Dense(tf.Module):
                def __init__(self, in_features, out_features):
                    super().__init__()
                    self.w = tf.Variable(tf.ones([in_features, out_features]) * 0.1)
                    self.b = tf.Variable(tf.zeros([out_features]))

                @tf.function
                def __call__(self, x):
                    return tf.nn.relu(x @ self.w + self.b)
            """
        },
        setup="layer = m.Dense(3, 2)",
        profiled="out = [layer(tf.ones([n, 3]) * n) for n in (1, 2, 4, 8)]",
        unseen=("layer(tf.ones([5, 3]))", "m.Dense(5, 4)(tf.ones([2, 5]))"),
        hand=(signature(spec("[None, None]"), decorator="    @tf.function\n"),),
    ),
    Case(
        name="text_classifier_token_ids",
        klass="precision",
        known=(
            "signed, but the model's first call builds its variables inside the trace (2 "
            "traces): no model.build is inserted"
        ),
        origin="a text classifier (Keras text-classification tutorial shape): Embedding, "
        "GlobalAveragePooling1D, Dense over int32 token ids of varying batch and length",
        files={
            M: """
            import keras
            import tensorflow as tf

            model = keras.Sequential([
                keras.layers.Embedding(20, 4),
                keras.layers.GlobalAveragePooling1D(),
                keras.layers.Dense(1),
            ])

            @tf.function
            def score(token_ids):
                return model(token_ids)
            """
        },
        setup="def ids(b, t): return tf.reshape(tf.range(b * t) % 20, [b, t])",
        profiled="out = [m.score(ids(b, t)) for b, t in ((2, 5), (2, 7), (3, 4), (2, 5))]",
        unseen=("m.score(ids(4, 9))", "m.score(ids(1, 2))"),
        hand=(
            signature(spec("[None, None]", "int32")),
            (
                M,
                "    keras.layers.Dense(1),\n])\n",
                "    keras.layers.Dense(1),\n])\nmodel.build((None, None))\n",
            ),
        ),
    ),
    Case(
        name="critic_model_in_attribute",
        klass="precision",
        origin="an RL agent holding a project keras.Model critic in self.critic (no static "
        "shape read in its call); value() sees a varying number of environments",
        files={
            M: """
            import keras
            import tensorflow as tf

            class Critic(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.hidden = keras.layers.Dense(8, activation="tanh")
                    self.out = keras.layers.Dense(1)

                def call(self, states):
                    return self.out(self.hidden(states))

            class Agent:
                def __init__(self):
                    self.critic = Critic()
                    self.critic(tf.zeros([1, 3]))

                @tf.function
                def value(self, states):
                    return tf.squeeze(self.critic(states), axis=-1)
            """
        },
        setup="agent = m.Agent()",
        profiled="out = [agent.value(tf.ones([n, 3]) * n) for n in (1, 2, 4, 8)]",
        unseen=(
            "agent.value(tf.ones([3, 3]))",
            "(lambda other: other.value(tf.ones([5, 3])))(m.Agent())",
        ),
        hand=(signature(spec("[None, 3]"), decorator="    @tf.function\n"),),
    ),
]
