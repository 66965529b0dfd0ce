"""JAX: two jitted gradient steps of a linear model on the GPU."""

import jax
import jax.numpy as jnp

assert jax.default_backend() == "gpu", jax.devices()
key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (256, 16))
y = x @ jnp.linspace(-1, 1, 16)
w = jnp.zeros(16)


@jax.jit
def step(w, x, y):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - 0.1 * grad, loss


for i in range(2):
    w, loss = step(w, x, y)
    print(f"step {i} loss {float(loss):.4f} on {w.devices()}")
print("TRAIN_OK")
