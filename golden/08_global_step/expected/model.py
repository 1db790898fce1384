"""SGD on a least-squares problem with a decaying learning rate and loss summaries."""

import tensorflow as tf

w = tf.Variable(tf.zeros([5]), name="w")


@tf.function
def train_step(x, y, global_step):
    learning_rate = 0.2 * 0.95 ** tf.cast(global_step, tf.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.linalg.matvec(x, w) - y))
    w.assign_sub(learning_rate * tape.gradient(loss, w))
    tf.summary.write("loss", loss, step=global_step)
    return loss, learning_rate
