"""DeepDream as a tf.Module, in the shape of TensorFlow's DeepDream tutorial.

The image's height and width change at every octave, and the caller passes the number of
steps and the step size as Python numbers.
"""

import tensorflow as tf


def calc_loss(img, model):
    img_batch = tf.expand_dims(img, axis=0)
    layer_activations = model(img_batch)
    if len(layer_activations) == 1:
        layer_activations = [layer_activations]
    losses = [tf.math.reduce_mean(act) for act in layer_activations]
    return tf.reduce_sum(losses)


class DeepDream(tf.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    @tf.function
    def __call__(self, img, steps, step_size):
        loss = tf.constant(0.0)
        for _ in tf.range(steps):
            with tf.GradientTape() as tape:
                tape.watch(img)
                loss = calc_loss(img, self.model)
            gradients = tape.gradient(loss, img)
            gradients /= tf.math.reduce_std(gradients) + 1e-8
            img = img + gradients * step_size
            img = tf.clip_by_value(img, -1, 1)
        return loss, img
