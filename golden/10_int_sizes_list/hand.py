"""A multi-scale pooling pyramid: the number of levels is a Python int."""

import tensorflow as tf


# levels sizes a Python list (and the output structure): it must stay a Python int,
# so no input_signature; reduce_retracing relaxes the signal length.
@tf.function(reduce_retracing=True)
def pyramid(signal, levels):
    pooled = [
        tf.nn.avg_pool1d(signal, ksize=2**level, strides=2**level, padding="VALID")
        for level in range(levels)
    ]
    return [tf.reduce_mean(p, axis=1) for p in pooled]
