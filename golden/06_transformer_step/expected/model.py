"""A one-block transformer classifier and its training step on padded token batches."""

import tensorflow as tf

VOCAB, DIM, CLASSES = 50, 16, 2


class TinyTransformer(tf.Module):
    def __init__(self):
        super().__init__()
        normal = tf.random.stateless_normal
        self.embedding = tf.Variable(normal([VOCAB, DIM], seed=[0, 1]) * 0.1)
        self.wq = tf.Variable(normal([DIM, DIM], seed=[0, 2]) * 0.1)
        self.wk = tf.Variable(normal([DIM, DIM], seed=[0, 3]) * 0.1)
        self.wv = tf.Variable(normal([DIM, DIM], seed=[0, 4]) * 0.1)
        self.head = tf.Variable(normal([DIM, CLASSES], seed=[0, 5]) * 0.1)

    def __call__(self, tokens):
        mask = tf.cast(tokens != 0, tf.float32)  # 0 is padding
        x = tf.gather(self.embedding, tokens)
        scores = tf.einsum("bqd,bkd->bqk", x @ self.wq, x @ self.wk) / DIM**0.5
        scores += (1.0 - mask[:, None, :]) * -1e9
        x = x + tf.nn.softmax(scores) @ (x @ self.wv)
        pooled = tf.reduce_sum(x * mask[..., None], 1) / tf.reduce_sum(mask, 1, keepdims=True)
        return pooled @ self.head


net = TinyTransformer()


@tf.function
def train_step(tokens, labels):
    with tf.GradientTape() as tape:
        logits = net(tokens)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
    grads = tape.gradient(loss, net.trainable_variables)
    for var, grad in zip(net.trainable_variables, grads):
        var.assign_sub(tf.convert_to_tensor(grad) * 0.5)
    return loss
