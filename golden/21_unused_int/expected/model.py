"""The TensorFlow quickstart's custom training step, with the epoch passed along."""

import keras
import tensorflow as tf

keras.utils.set_random_seed(21)
model = keras.Sequential(
    [keras.Input([6]), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)]
)
loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
optimizer.build(model.trainable_variables)
train_loss = keras.metrics.Mean(name="train_loss")
train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")


@tf.function
def train_step(images, labels, epoch):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)
    train_accuracy(labels, predictions)
    return loss
