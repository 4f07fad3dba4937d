"""A fuzz program: a small DAG of ``jnp``/``lax`` calls, printable as Python source.

Values are numbered in order: first the program's inputs (``x0``, ``x1``, ...), then one
per node (``v2``, ``v3``, ...).  A :class:`Node` holds the Python expression it runs
(operands written ``{0}``, ``{1}``, ...), the type JAX gives its result (or the exception
class JAX raises), and a numpy reference for its value.  The source text is what runs:
:meth:`Program.function` compiles it with ``jnp``/``lax`` bound to numjax or to real JAX, so
a printed failure can be pasted and rerun.
"""
import dataclasses
import math

import numpy as np

from jax_types import Ty


@dataclasses.dataclass
class Input:
    ty: Ty
    py_scalar: bool = False   # passed as a Python int/float/bool (weakly typed under jit)


@dataclasses.dataclass
class Node:
    op: str                 # label for reports, e.g. "jnp.floor_divide"
    family: str             # op family (see generator.KNOWN_BROKEN_UNTIL_ISSUE11_FIXES)
    expr: str               # Python expression; operands as {0}, {1}, ...
    args: tuple             # value indices of the operands
    ty: Ty = None           # JAX's result type; None when JAX raises ``error``
    error: type = None
    ref: object = None      # ref(*operand values as numpy/Python scalars) -> Expect
    tol: str = "exact"      # "exact", "ulps" (transcendental) or "bound" (order-dependent)
    # vmap_unspecified(*operands) -> True where JAX's own vmap and loop disagree
    vmap_unspecified: object = None


@dataclasses.dataclass
class Program:
    inputs: list
    nodes: list

    @property
    def n_values(self):
        return len(self.inputs) + len(self.nodes)

    def name(self, i):
        return f"x{i}" if i < len(self.inputs) else f"v{i}"

    def node_at(self, i):
        return self.nodes[i - len(self.inputs)]

    def expression(self, node, names=None):
        names = names or [self.name(a) for a in node.args]
        return node.expr.format(*names)

    def source(self, fn_name="program", return_all=False):
        params = ", ".join(self.name(i) for i in range(len(self.inputs)))
        lines = [f"def {fn_name}({params}):"]
        first = len(self.inputs)
        for k, node in enumerate(self.nodes):
            lines.append(f"    {self.name(first + k)} = {self.expression(node)}")
        if return_all:
            outs = ", ".join(self.name(first + k) for k in range(len(self.nodes)))
            lines.append(f"    return ({outs},)")
        else:
            lines.append(f"    return {self.name(self.n_values - 1)}")
        return "\n".join(lines)

    def function(self, namespace, return_all=True):
        """The program compiled from its source, with ``namespace`` (jnp, lax) as globals."""
        env = dict(namespace)
        exec(compile(self.source("program", return_all), "<fuzz program>", "exec"), env)
        return env["program"]

    def node_function(self, node, namespace):
        """One node as a function of its operands (for checking it on another path's inputs)."""
        names = [f"a{k}" for k in range(len(node.args))]
        src = f"lambda {', '.join(names)}: {node.expr.format(*names)}"
        return eval(compile(src, "<fuzz node>", "eval"), dict(namespace))

    @property
    def raises(self):
        return self.nodes[-1].error

    def __str__(self):
        return self.source()


def format_value(v):
    """Python source for an input value (numpy array or Python scalar)."""
    if isinstance(v, (bool, int)):
        return repr(v)
    if isinstance(v, float):
        return _float_src(v)
    arr = np.asarray(v)
    name = arr.dtype.name
    items = arr.astype(np.float64).tolist() if name == "bfloat16" else arr.tolist()
    text = _nested_src(items)
    dt = "ml_dtypes.bfloat16" if name == "bfloat16" else f"np.{name}"
    if arr.size == 0:
        return f"np.zeros({arr.shape}, {dt})"
    return f"np.array({text}, {dt})"


def _nested_src(x):
    if isinstance(x, list):
        return "[" + ", ".join(_nested_src(e) for e in x) + "]"
    if isinstance(x, float):
        return _float_src(x)
    return repr(x)


def _float_src(v):
    if math.isnan(v):
        return "float('nan')"
    if math.isinf(v):
        return "float('inf')" if v > 0 else "-float('inf')"
    return repr(v)


def repro_text(program, values, header=""):
    """A pasteable script: the program, its inputs and the calls to compare."""
    args = ", ".join(format_value(v) for v in values)
    return "\n".join([
        header,
        "import numpy as np, ml_dtypes",
        "import numjax as jax, numjax.numpy as jnp, numjax.lax as lax   # or: import jax ...",
        program.source(),
        f"args = ({args}{',' if len(values) == 1 else ''})",
        "print(program(*args)); print(jax.jit(program)(*args))",
    ])
