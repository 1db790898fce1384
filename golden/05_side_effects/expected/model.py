"""A running-statistics layer written with eager habits: print, a counter, a list."""

import tensorflow as tf


class RunningStats(tf.Module):
    def __init__(self, features):
        super().__init__()
        self.steps = tf.Variable(0)
        self.total = tf.Variable(tf.zeros([features]))

    @tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
    def update(self, batch):
        print("tracing RunningStats.update for", batch.shape)
        tf.print("batch mean:", tf.reduce_mean(batch))
        self.steps.assign_add(1)
        moments = []
        for power in range(1, 4):
            moments.append(tf.reduce_mean(batch**power, axis=0))
        self.total.assign_add(moments[0])
        return tf.stack(moments)
