"""numjax autodiff: the seed tutorials' automatic-differentiation sections, with `import numjax as jax`.

grad of sum_logistic against finite differences, higher derivatives, jacfwd /
jacrev / hessian, logistic-regression gradients (argnums, pytrees,
value_and_grad, numerical checks, check_grads), stop_gradient in TD learning,
and custom_jvp / custom_vjp.  Runs eagerly (no Numba compilation) in seconds.
"""
import numjax as jax
import numjax.numpy as jnp
from numjax import grad, jacfwd, jacrev
from numjax.test_util import check_grads


def section(title):
    print()
    print("-" * 8, title)


# ---------------------------------------------------------------- grad
section("grad")


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


x_small = jnp.arange(3.)
derivative_fn = grad(sum_logistic)
print(derivative_fn(x_small))


def first_finite_differences(f, x):
    eps = 1e-3
    return jnp.array([(f(x + eps * v) - f(x - eps * v)) / (2 * eps)
                      for v in jnp.eye(len(x))])


print(first_finite_differences(sum_logistic, x_small))

print(grad(jnp.tanh)(2.0))
print(grad(grad(jnp.tanh))(2.0))
print(grad(grad(grad(jnp.tanh)))(2.0))

f = lambda x: x**3 + 2*x**2 - 3*x + 1  # noqa: E731
dfdx = jax.grad(f)
d2fdx = jax.grad(dfdx)
d3fdx = jax.grad(d2fdx)
d4fdx = jax.grad(d3fdx)
print(dfdx(1.))
print(d2fdx(1.))
print(d3fdx(1.))
print(d4fdx(1.))


def sum_of_squares(x):
    return jnp.sum(x**2)


x = jnp.asarray([1.0, 2.0, 3.0, 4.0])
print(jax.grad(sum_of_squares)(x))


def sum_squared_error(x, y):
    return jnp.sum((x - y)**2)


y = jnp.asarray([1.1, 2.1, 3.1, 4.1])
print(jax.grad(sum_squared_error)(x, y))
print(jax.grad(sum_squared_error, argnums=(0, 1))(x, y))


def squared_error_with_aux(x, y):
    return sum_squared_error(x, y), x - y


print(jax.grad(squared_error_with_aux, has_aux=True)(x, y))

# ---------------------------------------------------------------- Jacobians and Hessians
section("jacfwd, jacrev, hessian")


def hessian(f):
    return jacfwd(jacrev(f))


def g(v):
    return jnp.sin(v) * jnp.sum(v ** 2)


v = jnp.asarray([0.5, 1.0, 1.5])
print("jacfwd result, with shape", jacfwd(g)(v).shape)
print(jacfwd(g)(v))
print("jacrev result, with shape", jacrev(g)(v).shape)
print(jacrev(g)(v))
print("hessian, with shape", hessian(sum_logistic)(x_small).shape)
print(hessian(sum_logistic)(x_small))
print(jax.hessian(sum_logistic)(x_small))

# ---------------------------------------------------------------- logistic regression
section("logistic regression")


def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)


# Outputs probability of a label being true.
def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)


# Build a toy dataset.
inputs = jnp.array([[0.52, 1.12, 0.77],
                    [0.88, -1.08, 0.15],
                    [0.52, 0.06, -1.30],
                    [0.74, -2.49, 1.39]])
targets = jnp.array([True, True, False, True])


# Training loss is the negative log-likelihood of the training examples.
def loss(W, b):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))


# The tutorial draws W and b with jax.random.key(0); these are the values it gets.
W = jnp.array([-0.3683878481388092, -2.275688886642456, 0.011447565630078316], dtype=jnp.float32)
b = jnp.array(0.8535516262054443, dtype=jnp.float32)

# Differentiate `loss` with respect to the first positional argument:
W_grad = grad(loss, argnums=0)(W, b)
print(f'{W_grad=}')
# Since argnums=0 is the default, this does the same thing:
W_grad = grad(loss)(W, b)
print(f'{W_grad=}')
# But you can choose different values too, and drop the keyword:
b_grad = grad(loss, 1)(W, b)
print(f'{b_grad=}')
# Including tuple values
W_grad, b_grad = grad(loss, (0, 1))(W, b)
print(f'{W_grad=}')
print(f'{b_grad=}')


def loss2(params_dict):
    preds = predict(params_dict['W'], params_dict['b'], inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))


print(grad(loss2)({'W': W, 'b': b}))

loss_value, Wb_grad = jax.value_and_grad(loss, (0, 1))(W, b)
print('loss value', loss_value)
print('loss value', loss(W, b))

# Set a step size for finite differences calculations
eps = 1e-4
# Check b_grad with scalar finite differences
b_grad_numerical = (loss(W, b + eps / 2.) - loss(W, b - eps / 2.)) / eps
print('b_grad_numerical', b_grad_numerical)
print('b_grad_autodiff', grad(loss, 1)(W, b))
# Check W_grad with finite differences in a random direction (the tutorial's random vector)
vec = jnp.array([0.9672462344169617, -0.5627836585044861, 0.3791317939758301], dtype=jnp.float32)
unitvec = vec / jnp.sqrt(jnp.vdot(vec, vec))
W_grad_numerical = (loss(W + eps / 2. * unitvec, b) - loss(W - eps / 2. * unitvec, b)) / eps
print('W_dirderiv_numerical', W_grad_numerical)
print('W_dirderiv_autodiff', jnp.vdot(grad(loss)(W, b), unitvec))

check_grads(loss, (W, b), order=2)  # check up to 2nd order derivatives
print('check_grads(loss, (W, b), order=2): ok')

# ---------------------------------------------------------------- stop_gradient
section("stop_gradient (TD learning)")

# Value function and initial parameters
value_fn = lambda theta, state: jnp.dot(theta, state)  # noqa: E731
theta = jnp.array([0.1, -0.1, 0.])

# An example transition.
s_tm1 = jnp.array([1., 2., -1.])
r_t = jnp.array(1.)
s_t = jnp.array([2., 1., 0.])


def td_loss(theta, s_tm1, r_t, s_t):
    v_tm1 = value_fn(theta, s_tm1)
    target = r_t + value_fn(theta, s_t)
    return (target - v_tm1) ** 2


td_update = jax.grad(td_loss)
delta_theta = td_update(theta, s_tm1, r_t, s_t)
print(delta_theta)


def td_loss_with_stop_gradient(theta, s_tm1, r_t, s_t):
    v_tm1 = value_fn(theta, s_tm1)
    target = r_t + value_fn(theta, s_t)
    return (jax.lax.stop_gradient(target) - v_tm1) ** 2


td_update = jax.grad(td_loss_with_stop_gradient)
delta_theta = td_update(theta, s_tm1, r_t, s_t)
print(delta_theta)

# ---------------------------------------------------------------- custom derivatives
section("custom_jvp, custom_vjp")


def log1pexp_naive(x):
    return jnp.log(1. + jnp.exp(x))


print(jax.grad(log1pexp_naive)(100.))      # nan: inf / inf


@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1. + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1/(1 + jnp.exp(x))) * x_dot
    return ans, ans_dot


print(jax.grad(log1pexp)(100.))
print(jax.grad(log1pexp)(3.), jax.grad(jax.grad(log1pexp))(0.))


@jax.custom_vjp
def clip_gradient(lo, hi, x):
    return x  # identity function


def clip_gradient_fwd(lo, hi, x):
    return x, (lo, hi)  # save bounds as residuals


def clip_gradient_bwd(res, g):
    lo, hi = res
    return (None, None, jnp.clip(g, lo, hi))  # use None to indicate zero cotangents for lo and hi


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def clip_sin(x):
    x = clip_gradient(-0.75, 0.75, x)
    return jnp.sin(x)


t = jnp.linspace(0, 10, 6)
print(jax.grad(lambda t: jnp.sum(jnp.sin(t)))(t))
print(jax.grad(lambda t: jnp.sum(clip_sin(t)))(t))
