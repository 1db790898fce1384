"""A hand-written training step for a two-layer classifier, with input noise."""

import random

import tensorflow as tf


class Classifier(tf.Module):
    def __init__(self, features, hidden, classes):
        super().__init__()
        init = tf.random.stateless_normal
        self.w1 = tf.Variable(init([features, hidden], seed=[1, 2]) * 0.3)
        self.w2 = tf.Variable(init([hidden, classes], seed=[3, 4]) * 0.3)

    def __call__(self, x):
        return tf.nn.relu(x @ self.w1) @ self.w2


net = Classifier(features=6, hidden=16, classes=3)


@tf.function(reduce_retracing=True)
def train_step(x, labels):
    x = tf.cast(x, tf.float32)
    noise_scale = tf.random.uniform([]) * 0.01  # meant to be a new draw on every step
    x = x + noise_scale
    with tf.GradientTape() as tape:
        logits = net(x)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
    grads = tape.gradient(loss, net.trainable_variables)
    for var, grad in zip(net.trainable_variables, grads):
        var.assign_sub(0.1 * grad)
    return loss
