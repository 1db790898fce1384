"""A recurrent encoder over time, written the way the tf.function guide writes its dynamic RNN."""

import tensorflow as tf

FEATURES = 4
UNITS = 8

W_IN = tf.Variable(tf.random.stateless_normal([FEATURES, UNITS], seed=[1, 2]) * 0.5)
W_REC = tf.Variable(tf.random.stateless_normal([UNITS, UNITS], seed=[3, 4]) * 0.5)


def rnn_step(inputs, state):
    return tf.tanh(inputs @ W_IN + state @ W_REC)


@tf.function(reduce_retracing=True)
def encode(input_data, initial_state):
    # [batch, time, features] -> [time, batch, features]
    input_data = tf.transpose(input_data, [1, 0, 2])
    max_seq_len = tf.shape(input_data)[0]

    states = tf.TensorArray(tf.float32, size=max_seq_len)
    state = initial_state
    for i in tf.range(max_seq_len):
        state = rnn_step(input_data[i], state)
        states = states.write(i, state)
    return tf.transpose(states.stack(), [1, 0, 2])
