"""A JAX program that knows nothing of graphscope (GPU machine only): a small
MLP stack and a while loop under jax.jit. Run with XLA's command buffers on
(XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,WHILE,
CONDITIONAL --xla_gpu_graph_min_graph_size=1), XLA turns them into CUDA
graphs whose kernels are named after its fusions.

    python3 jax_app.py
"""
import jax
import jax.numpy as jnp


def layer(x, w):
    return jax.nn.gelu(x @ w) * 0.5 + x


@jax.jit
def model(x, ws):
    for w in ws:
        x = layer(x, w)
    return jnp.tanh(x).sum()


@jax.jit
def loop(x):
    def body(c):
        i, y = c
        return i + 1, jnp.sin(y) * 1.01 + 0.1

    return jax.lax.while_loop(lambda c: c[0] < 6, body, (0, x))[1]


def main():
    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (128, 256))
    ws = [jax.random.normal(jax.random.fold_in(key, k), (256, 256)) * 0.05 for k in range(4)]
    for _ in range(4):
        r = model(x, ws)
        y = loop(x)
    r.block_until_ready()
    y.block_until_ready()
    print("jax ok", jax.devices()[0].device_kind, float(r), float(y.sum()))


if __name__ == "__main__":
    main()
