"""A linear next-step forecaster trained one target column at a time."""

import tensorflow as tf

from windows import label_column, split_window

FEATURES = 5
kernel = tf.Variable(tf.eye(FEATURES), name="kernel")


@tf.function
def train_step(window, target):
    inputs, labels = split_window(window)
    with tf.GradientTape() as tape:
        forecast = tf.matmul(inputs[:, -1, :], kernel)
        error = label_column(forecast, target) - label_column(labels, target)
        loss = tf.reduce_mean(tf.square(error))
    kernel.assign_sub(0.05 * tape.gradient(loss, kernel))
    return loss
