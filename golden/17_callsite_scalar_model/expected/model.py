"""Per-class saliency maps of a small Keras image classifier (vanilla gradients)."""

import keras
import tensorflow as tf


def build_classifier(num_classes):
    keras.utils.set_random_seed(17)
    return keras.Sequential(
        [
            keras.Input(shape=(12, 12, 1)),
            keras.layers.Conv2D(4, 3, activation="relu"),
            keras.layers.Flatten(),
            keras.layers.Dense(num_classes),
        ]
    )


@tf.function
def explain(model, images, class_index):
    """How much each pixel raises the score of ``class_index``: |d score / d pixel|."""
    with tf.GradientTape() as tape:
        tape.watch(images)
        logits = model(images, training=False)
        score = tf.reduce_sum(logits[:, class_index])
    grads = tape.gradient(score, images)
    return tf.reduce_max(tf.abs(grads), axis=-1)


def explain_classes(model, images, classes):
    """The saliency map of every class in ``classes``, by class."""
    maps = {}
    for class_index in classes:
        maps[class_index] = explain(model, images, tf.constant(class_index))
    return maps
