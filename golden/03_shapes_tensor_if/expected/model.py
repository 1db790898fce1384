"""Per-step normalisation of a feature map whose both dimensions change every step."""

import tensorflow as tf


@tf.function(reduce_retracing=True)
def normalize(features):
    total = tf.reduce_sum(features)
    if total > 0:  # a tensor condition: autograph makes it a tf.cond, not a retrace
        scaled = features / total
    else:
        scaled = -features
    return scaled, tf.shape(features)[0]
