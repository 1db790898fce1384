"""One-vs-rest fine-tuning of a small classifier: one class column at a time, weighted."""

import keras
import tensorflow as tf

keras.utils.set_random_seed(20)
model = keras.Sequential(
    [keras.Input([4]), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)]
)
criterion = keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function
def class_step(x, y, k, weight):
    with tf.GradientTape() as tape:
        p = model(x)
        loss = weight * criterion(y, p[:, k])
    grads = tape.gradient(loss, model.trainable_variables)
    for variable, grad in zip(model.trainable_variables, grads):
        variable.assign_sub(0.1 * grad)
    return p[:, k], loss
