"""A damped simulation that writes a snapshot of its state to a new file every step."""

import tensorflow as tf

state = tf.Variable(tf.zeros([4, 4]), name="state")


def write_tensor(filename, tensor):
    tf.io.write_file(filename, tf.io.serialize_tensor(tensor))


@tf.function
def advance(forcing, snapshot_path):
    state.assign(0.9 * state + forcing)
    write_tensor(snapshot_path, state.read_value())
    return tf.reduce_sum(state)
