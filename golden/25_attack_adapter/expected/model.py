"""A model-agnostic adversarial attack (FGSM) adapter: it wraps whatever classifier it is
given and perturbs a batch of images along the sign of the loss gradient."""

import tensorflow as tf


class FGSM:
    def __init__(self, model, epsilon):
        self.model = model
        self.epsilon = epsilon
        self.loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        try:  # autosig: guarded relaxed trace: other calls trace as before
            if type(self) is __class__:  # subclasses trace as before
                self.__call__.get_concrete_function(
                    tf.TensorSpec(shape=[None, None, None, 1], dtype=tf.float32),
                    tf.TensorSpec(shape=[None], dtype=tf.int64),
                )
        except Exception:  # specs the code cannot trace: nothing seeded
            pass

    @tf.function
    def __call__(self, images, labels):
        with tf.GradientTape() as tape:
            tape.watch(images)
            loss = self.loss_fn(labels, self.model(images))
        gradient = tape.gradient(loss, images)
        return tf.clip_by_value(images + self.epsilon * tf.sign(gradient), 0.0, 1.0)
