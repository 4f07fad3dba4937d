"""Hand-written baselines for benchmarks/run.py: the same computations as its programs, written
out as loops for Numba (compiled with cache=True) or as plain numpy (gradients worked out by hand).
"""
import numba
import numpy as np


# ---------------------------------------------------------------- row-wise and reductions (Numba)

@numba.njit(cache=True)
def selu_numba(x):
    out = np.empty_like(x)
    for i in range(x.size):
        v = x[i]
        out[i] = np.float32(1.05) * (v if v > 0 else np.float32(1.67) * np.exp(v) - np.float32(1.67))
    return out


@numba.njit(cache=True)
def chain_numba(x):
    out = np.empty_like(x)
    for i in range(x.size):
        v = np.sin(x[i]) * np.float32(0.5) + np.float32(0.25)
        out[i] = np.cos(np.log1p(np.tanh(np.exp(v)))) * np.float32(2.0) - np.float32(1.0)
    return out


@numba.njit(cache=True)
def _row_max(x, r):
    m = x[r, 0]
    for c in range(x.shape[1]):
        m = max(m, x[r, c])
    return m


@numba.njit(cache=True)
def softmax_numba(x):
    out = np.empty_like(x)
    for r in range(x.shape[0]):
        m = _row_max(x, r)
        s = np.float32(0)
        for c in range(x.shape[1]):
            e = np.exp(x[r, c] - m)
            out[r, c] = e
            s += e
        for c in range(x.shape[1]):
            out[r, c] /= s
    return out


@numba.njit(cache=True)
def _column_max(x):
    m = x[0].copy()
    for r in range(1, x.shape[0]):
        for c in range(x.shape[1]):
            m[c] = max(m[c], x[r, c])
    return m


@numba.njit(cache=True)
def softmax_first_numba(x):
    m = _column_max(x)
    out = np.empty_like(x)
    s = np.zeros_like(m)
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            e = np.exp(x[r, c] - m[c])
            out[r, c] = e
            s[c] += e
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            out[r, c] /= s[c]
    return out


@numba.njit(cache=True)
def _row_logsumexp(x, r):
    m = _row_max(x, r)
    s = np.float32(0)
    for c in range(x.shape[1]):
        s += np.exp(x[r, c] - m)
    return np.log(s) + m


@numba.njit(cache=True)
def log_softmax_numba(x):
    out = np.empty_like(x)
    for r in range(x.shape[0]):
        lse = _row_logsumexp(x, r)
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] - lse
    return out


@numba.njit(cache=True)
def layer_norm_numba(x, scale, shift):
    out = np.empty_like(x)
    n = x.shape[1]
    for r in range(x.shape[0]):
        s = np.float32(0)
        for c in range(n):
            s += x[r, c]
        mean = s / n
        q = np.float32(0)
        for c in range(n):
            q += (x[r, c] - mean) ** 2
        inv = np.float32(1) / np.sqrt(q / n + np.float32(1e-5))
        for c in range(n):
            out[r, c] = (x[r, c] - mean) * inv * scale[c] + shift[c]
    return out


@numba.njit(cache=True)
def logsumexp_last_numba(x):
    out = np.empty(x.shape[0], x.dtype)
    for r in range(x.shape[0]):
        out[r] = _row_logsumexp(x, r)
    return out


@numba.njit(cache=True)
def logsumexp_first_numba(x):
    m = _column_max(x)
    s = np.zeros_like(m)
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            s[c] += np.exp(x[r, c] - m[c])
    return np.log(s) + m


@numba.njit(cache=True)
def argmax_last_numba(x):
    out = np.empty(x.shape[0], np.int64)
    for r in range(x.shape[0]):
        out[r] = np.argmax(x[r])
    return out


@numba.njit(cache=True)
def argmax_first_numba(x):
    best = x[0].copy()
    out = np.zeros(x.shape[1], np.int64)
    for r in range(1, x.shape[0]):
        for c in range(x.shape[1]):
            if x[r, c] > best[c]:
                best[c] = x[r, c]
                out[c] = r
    return out


@numba.njit(cache=True)
def var_last_numba(x):
    out = np.empty(x.shape[0], x.dtype)
    n = x.shape[1]
    for r in range(x.shape[0]):
        s = np.float32(0)
        for c in range(n):
            s += x[r, c]
        mean = s / n
        q = np.float32(0)
        for c in range(n):
            q += (x[r, c] - mean) ** 2
        out[r] = q / n
    return out


@numba.njit(cache=True)
def sum_first_numba(x):
    s = np.zeros(x.shape[1], x.dtype)
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            s[c] += x[r, c]
    return s


@numba.njit(cache=True)
def var_first_numba(x):
    mean = sum_first_numba(x) / x.shape[0]
    q = np.zeros_like(mean)
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            q[c] += (x[r, c] - mean[c]) ** 2
    return q / x.shape[0]


@numba.njit(cache=True)
def sum_last_numba(x):
    out = np.empty(x.shape[0], x.dtype)
    for r in range(x.shape[0]):
        s = np.float32(0)
        for c in range(x.shape[1]):
            s += x[r, c]
        out[r] = s
    return out


# ---------------------------------------------------------------- loops (Python on numpy values; the same under Numba)

def newton_sqrt_python(a):
    y, prev, i = a, a + np.float32(1), 0
    while y != prev and i < 50:
        y, prev, i = np.float32(0.5) * (y + a / y), y, i + 1
    return y


newton_sqrt_numba = numba.njit(cache=True)(newton_sqrt_python)


def contraction_python(x):
    for _ in range(1000):
        x = np.float32(0.5) * np.cos(x) + np.float32(0.25) * x
    return x


contraction_numba = numba.njit(cache=True)(contraction_python)


def rnn_python(W, U, xs):
    h = np.zeros(W.shape[0], np.float32)
    ys = np.empty(len(xs), np.float32)
    for t in range(len(xs)):
        h = np.tanh(W @ h + U @ xs[t])
        ys[t] = h.sum()
    return h, ys


@numba.njit(cache=True)
def rnn_numba(W, U, xs):
    n, k = U.shape
    h = np.zeros(n, np.float32)
    new = np.empty(n, np.float32)
    ys = np.empty(xs.shape[0], np.float32)
    for t in range(xs.shape[0]):
        s = np.float32(0)
        for i in range(n):
            a = np.float32(0)
            for j in range(n):
                a += W[i, j] * h[j]
            for j in range(k):
                a += U[i, j] * xs[t, j]
            new[i] = np.tanh(a)
            s += new[i]
        h[:] = new
        ys[t] = s
    return h, ys


# ---------------------------------------------------------------- gradients by hand (numpy)

def mlp_grad_numpy(params, x, y):
    """Hand-written forward and backward pass of mlp_loss."""
    acts, pre = [x], []
    h = x
    for W, b in params[:-1]:
        z = h @ W + b
        pre.append(z)
        h = np.maximum(z, 0.0)
        acts.append(h)
    W, b = params[-1]
    logits = h @ W + b
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    g = (p * y.sum(axis=1, keepdims=True) - y) / x.shape[0]
    grads = []
    for k in range(len(params) - 1, -1, -1):
        W, b = params[k]
        grads.append((acts[k].T @ g, g.sum(0)))
        if k:
            g = (g @ W.T) * (pre[k - 1] > 0)
    return grads[::-1]


def per_example_grads_numpy(params, x, y):
    (W1, b1), (W2, b2) = params
    h = np.tanh(x @ W1 + b1)                       # (B, 64)
    d_out = 2 * ((h @ W2 + b2)[:, 0] - y)          # (B,)
    dh = d_out[:, None] * W2[:, 0] * (1 - h * h)   # (B, 64)
    return [(x[:, :, None] * dh[:, None, :], dh), (h[:, :, None] * d_out[:, None, None], d_out[:, None])]
