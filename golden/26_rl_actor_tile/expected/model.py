"""A Gaussian policy agent in the shape of public TF2 reinforcement-learning code
(tf2rl-style SAC/PPO actors): the agent holds a project Keras model in an attribute and
calls it inside its tf.function."""

import tensorflow as tf


class GaussianActor(tf.keras.Model):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(16, activation="relu")
        self.mean = tf.keras.layers.Dense(action_dim)
        self.log_std = tf.Variable(tf.fill([1, action_dim], -0.5), name="log_std")
        self(tf.zeros([1, state_dim]))

    def call(self, states):
        mean = self.mean(self.hidden(states))
        log_std = tf.tile(self.log_std, [states.shape[0], 1])
        return mean, log_std


class Agent:
    def __init__(self, state_dim, action_dim):
        self.actor = GaussianActor(state_dim, action_dim)

    @tf.function
    def get_action(self, states, noise):
        mean, log_std = self.actor(states)
        return tf.tanh(mean + tf.exp(log_std) * noise)
