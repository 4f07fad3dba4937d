"""lax.Precision: the ``precision=`` values of dot-like ops.

numjax computes float32 dots in float32 on the CPU whatever the precision asks, so the
value only needs to exist and compare like JAX's.
"""
import enum


class Precision(enum.Enum):
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"bfloat16": cls.DEFAULT, "default": cls.DEFAULT, "fastest": cls.DEFAULT,
                 "tensorfloat32": cls.HIGH, "bfloat16_3x": cls.HIGH, "high": cls.HIGH,
                 "float32": cls.HIGHEST, "highest": cls.HIGHEST}
        return names.get(value.lower()) if isinstance(value, str) else None

    def __str__(self):
        return self.name
