"""A recommender's scoring functions: nested dict features and ragged token lists."""

import tensorflow as tf

token_embedding = tf.Variable(tf.random.stateless_normal([40, 4], seed=[12, 0]), name="tokens")
numeric_weights = tf.Variable([0.5, -0.25, 1.0], name="numeric")


@tf.function
def score_features(features):
    numeric = tf.stack(
        [features["user"]["age"], features["user"]["income"], features["item"]["price"]], axis=1
    )
    bias = tf.cast(features["item"]["category"], tf.float32) * 0.1
    return tf.linalg.matvec(numeric, numeric_weights) + bias


try:  # autosig: guarded relaxed trace: other calls trace as before
    score_features.get_concrete_function(
        {'item': {'category': tf.TensorSpec(shape=[None], dtype=tf.int64), 'price': tf.TensorSpec(shape=[None], dtype=tf.float32)}, 'user': {'age': tf.TensorSpec(shape=[None], dtype=tf.float32), 'income': tf.TensorSpec(shape=[None], dtype=tf.float32)}},
    )
except Exception:  # specs the code cannot trace: nothing seeded
    pass


@tf.function
def bag_of_words(tokens):
    vectors = tf.gather(token_embedding, tokens)  # ragged (batch, None, 4)
    return tf.reduce_mean(vectors, axis=1)


try:  # autosig: guarded relaxed trace: other calls trace as before
    bag_of_words.get_concrete_function(
        tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int64, ragged_rank=1),
    )
except Exception:  # specs the code cannot trace: nothing seeded
    pass
