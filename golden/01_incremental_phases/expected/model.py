"""Linear regression trained in phases: batch size, loss object and learning rate change."""

import tensorflow as tf

weights = tf.Variable(tf.zeros([4, 1]), name="weights")
bias = tf.Variable(0.0, name="bias")


@tf.function(reduce_retracing=True)
def train_step(x, y, loss_fn, learning_rate):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, x @ weights + bias)
    grad_w, grad_b = tape.gradient(loss, [weights, bias])
    weights.assign_sub(learning_rate * grad_w)
    bias.assign_sub(learning_rate * grad_b)
    return loss


@tf.function
def evaluate(x, y):
    error = x @ weights + bias - y
    return tf.reduce_mean(tf.square(error))


try:  # autosig: guarded relaxed trace: other calls trace as before
    evaluate.get_concrete_function(
        tf.TensorSpec(shape=[None, 4], dtype=tf.float32),
        tf.TensorSpec(shape=[None, None], dtype=tf.float32),
    )
except Exception:  # specs the code cannot trace: nothing seeded
    pass
