"""A recommender's scoring functions: nested dict features and ragged token lists."""

import tensorflow as tf

token_embedding = tf.Variable(tf.random.stateless_normal([40, 4], seed=[12, 0]), name="tokens")
numeric_weights = tf.Variable([0.5, -0.25, 1.0], name="numeric")


@tf.function(input_signature=[
    {
        "item": {
            "category": tf.TensorSpec(shape=[None], dtype=tf.int64),
            "price": tf.TensorSpec(shape=[None], dtype=tf.float32),
        },
        "user": {
            "age": tf.TensorSpec(shape=[None], dtype=tf.float32),
            "income": tf.TensorSpec(shape=[None], dtype=tf.float32),
        },
    },
])
def score_features(features):
    numeric = tf.stack(
        [features["user"]["age"], features["user"]["income"], features["item"]["price"]], axis=1
    )
    bias = tf.cast(features["item"]["category"], tf.float32) * 0.1
    return tf.linalg.matvec(numeric, numeric_weights) + bias


@tf.function(input_signature=[
    tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int64, ragged_rank=1),
])
def bag_of_words(tokens):
    vectors = tf.gather(token_embedding, tokens)  # ragged (batch, None, 4)
    return tf.reduce_mean(vectors, axis=1)
