"""JAX's error types, with JAX's messages, so ``except jax.errors.X`` keeps working."""

_URL = "https://docs.jax.dev/en/latest/errors.html#jax.errors."


class JAXTypeError(TypeError):
    pass


class JAXIndexError(IndexError):
    pass


def _origin(tracer):
    origin = getattr(tracer, "_origin_msg", None)
    return origin() if origin is not None else ""


class ConcretizationTypeError(JAXTypeError):
    def __init__(self, tracer, context=""):
        aval = tracer.aval.str_short() if hasattr(tracer, "aval") else str(tracer)
        msg = f"Abstract tracer value encountered where concrete value is expected: traced array with shape {aval}\n"
        if context:
            msg += context + "\n"
        msg += _origin(tracer) + "\n"
        msg += f"See {_URL}ConcretizationTypeError"
        super().__init__(msg)


class TracerBoolConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        msg = (f"Attempted boolean conversion of traced array with shape {tracer.aval.str_short()}.\n"
               f"{_origin(tracer)}See {_URL}TracerBoolConversionError")
        TypeError.__init__(self, msg)


class TracerIntegerConversionError(JAXTypeError):
    def __init__(self, tracer):
        msg = (f"The __index__() method was called on traced array with shape {tracer.aval.str_short()}\n"
               f"{_origin(tracer)}See {_URL}TracerIntegerConversionError")
        super().__init__(msg)


class TracerArrayConversionError(JAXTypeError):
    def __init__(self, tracer):
        msg = (f"The numpy.ndarray conversion method __array__() was called on traced array with shape "
               f"{tracer.aval.str_short()}\n{_origin(tracer)}See {_URL}TracerArrayConversionError")
        super().__init__(msg)


class NonConcreteBooleanIndexError(JAXIndexError):
    def __init__(self, tracer):
        super().__init__(
            f"Array boolean indices must be concrete; got {tracer.aval.str_short()}\n\n"
            f"See {_URL}NonConcreteBooleanIndexError")


class ShardingTypeError(Exception):
    """An operation's result sharding cannot be decided from its operands' (JAX's sharding in
    types, jax._src.core.ShardingTypeError): give ``out_sharding=`` or use ``auto_axes``."""


class UnexpectedTracerError(Exception):
    pass


class JaxRuntimeError(RuntimeError):
    """A failure found while running a computation (e.g. a failed checkify check)."""


class OutOfMemoryError(JaxRuntimeError, MemoryError):
    """JAX's ``RESOURCE_EXHAUSTED`` JaxRuntimeError for an allocation that failed; also a
    MemoryError, which numpy raised underneath."""


def out_of_memory(err):
    """``err`` (numpy's MemoryError) as JAX reports it: RESOURCE_EXHAUSTED with the bytes."""
    if isinstance(err, JaxRuntimeError):
        return err
    size = getattr(err, "_total_size", None)
    what = f"{size} bytes" if size is not None else "memory"
    return OutOfMemoryError(f"RESOURCE_EXHAUSTED: Out of memory allocating {what}. ({err})")


class EagerFallbackWarning(UserWarning):
    """jit could not lower a program and runs it op by op, eagerly (correct, but slow).

    The message names the function, the primitive that has no lowering and, when the
    reason is its dtype, the dtype. The test suite turns this warning into an error
    except where a test asks for it."""

    def __init__(self, fun_name, primitive, reason, dtype=None):
        self.fun_name, self.primitive, self.reason = fun_name, str(primitive), reason
        self.dtype = None if dtype is None else getattr(dtype, "name", str(dtype))
        on = f" on {self.dtype}" if self.dtype else ""
        super().__init__(f"numjax: {fun_name} runs eagerly, op by op: primitive "
                         f"{self.primitive}{on} has no CPU lowering ({reason})")


class NoLoweringError(NotImplementedError):
    """Raised by a backend for a primitive (and dtype) it cannot lower; jit catches it and
    warns with :class:`EagerFallbackWarning`."""

    def __init__(self, primitive, reason, dtype=None):
        self.primitive, self.reason, self.dtype = str(primitive), reason, dtype
        super().__init__(reason)

    def warning(self, fun_name):
        return EagerFallbackWarning(fun_name, self.primitive, self.reason, self.dtype)
