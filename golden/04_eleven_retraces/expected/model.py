"""Token featurisation whose every call retraces, for three different reasons."""

import tensorflow as tf


class FeatureOptions:
    """Settings the caller builds afresh for every batch."""

    def __init__(self, vocab_size, scale):
        self.vocab_size = vocab_size
        self.scale = scale


@tf.function(reduce_retracing=True)
def featurize(tokens, weights, options):
    one_hot = tf.one_hot(tokens, options.vocab_size, dtype=weights.dtype)
    counts = tf.reduce_sum(one_hot, axis=0)
    return counts * weights * options.scale
