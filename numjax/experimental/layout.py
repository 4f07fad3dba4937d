"""``jax.experimental.layout``: how an array is laid out in memory, and a layout with a
sharding (``Format``). numjax's arrays are C-contiguous host arrays, so these only carry
what they are given; nothing in numjax consumes them."""


class Layout:
    def __init__(self, major_to_minor=None, tiling=(), sub_byte_element_size_in_bits=0):
        self.major_to_minor = None if major_to_minor is None else tuple(major_to_minor)
        self.tiling, self.sub_byte_element_size_in_bits = tuple(tiling), sub_byte_element_size_in_bits

    def __repr__(self):
        return f"Layout(major_to_minor={self.major_to_minor})"


class Format:
    def __init__(self, layout=None, sharding=None):
        self.layout, self.sharding = layout, sharding

    def __repr__(self):
        return f"Format({self.layout}, {self.sharding})"
