"""The one exception a backend raises for a program it does not compile (another backend, or
eager evaluation with an EagerFallbackWarning, takes it)."""


class Unsupported(NotImplementedError):
    """A construct, primitive or type a backend does not compile."""
