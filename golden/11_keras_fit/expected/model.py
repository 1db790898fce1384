"""A small Keras regressor fitted in rounds, each round with a larger batch size."""

import keras
import tensorflow as tf


def build_model():
    keras.utils.set_random_seed(11)
    model = keras.Sequential(
        [keras.Input(shape=(6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return model


def fit_schedule(model, x, y, batch_sizes):
    losses = []
    for batch_size in batch_sizes:
        data = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=True)
        history = model.fit(data, epochs=1, verbose=0)
        losses.append(history.history["loss"][-1])
    return losses
