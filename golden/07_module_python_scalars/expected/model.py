"""Iterative image smoothing (heat equation) as a tf.Module."""

import tensorflow as tf


class Smoother(tf.Module):
    def __init__(self):
        super().__init__()
        laplacian = [[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]
        self.kernel = tf.constant(laplacian, shape=[3, 3, 1, 1])
        try:  # autosig: guarded relaxed trace: other calls trace as before
            if type(self) is __class__:  # subclasses trace as before
                self.__call__.get_concrete_function(
                    tf.TensorSpec(shape=[None, None, None, 1], dtype=tf.float32),
                    tf.TensorSpec(shape=[], dtype=tf.int32),
                    tf.TensorSpec(shape=[], dtype=tf.float32),
                )
        except Exception:  # specs the code cannot trace: nothing seeded
            pass

    @tf.function
    def __call__(self, image, steps, step_size):
        for _ in tf.range(steps):
            edges = tf.nn.conv2d(image, self.kernel, strides=1, padding="SAME")
            image = image + step_size * edges
        return image
