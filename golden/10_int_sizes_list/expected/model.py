"""A multi-scale pooling pyramid: the number of levels is a Python int."""

import tensorflow as tf


@tf.function(reduce_retracing=True)
def pyramid(signal, levels):
    pooled = [
        tf.nn.avg_pool1d(signal, ksize=2**level, strides=2**level, padding="VALID")
        for level in range(levels)
    ]
    return [tf.reduce_mean(p, axis=1) for p in pooled]
