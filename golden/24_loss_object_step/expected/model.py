"""A custom training loop in the shape of TensorFlow's quickstart for experts: a Keras
loss object, an optimizer and a metric used inside one train step."""

import tensorflow as tf

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential(
    [
        tf.keras.Input(shape=(8,)),
        tf.keras.layers.Dense(16, activation="relu"),
        tf.keras.layers.Dense(4),
    ]
)
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
train_loss = tf.keras.metrics.Mean(name="train_loss")


@tf.function
def train_step(features, labels):
    with tf.GradientTape() as tape:
        predictions = model(features, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)
    return loss


try:  # autosig: guarded relaxed trace: other calls trace as before
    train_step.get_concrete_function(
        tf.TensorSpec(shape=[None, 8], dtype=tf.float32),
        tf.TensorSpec(shape=[None], dtype=tf.int64),
    )
except Exception:  # specs the code cannot trace: nothing seeded
    pass
