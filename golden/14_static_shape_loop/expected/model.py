"""Gated running summary and attention pooling over time, from static shapes."""

import tensorflow as tf

DIM = 6

W_GATE = tf.Variable(tf.random.stateless_normal([DIM, DIM], seed=[5, 6]) * 0.4)
W_SCORE = tf.Variable(tf.random.stateless_normal([DIM, 1], seed=[7, 8]) * 0.4)


@tf.function(reduce_retracing=True)
def summarize(x):
    b, t, d = tf.shape(x)[0], tf.shape(x)[1], x.shape[2]  # batch, time, features
    summary = tf.zeros([b, d])
    for i in range(t):
        gate = tf.sigmoid(x[:, i] @ W_GATE)
        summary = gate * summary + (1.0 - gate) * x[:, i]
    scores = tf.reshape(x, [b * t, d]) @ W_SCORE
    weights = tf.nn.softmax(tf.reshape(scores, [b, t]), axis=1)
    pooled = tf.reduce_sum(weights[:, :, None] * x, axis=1)
    return summary, pooled
