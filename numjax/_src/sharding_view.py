"""``jax.debug.visualize_sharding`` / ``visualize_array_sharding``: a grid of which device holds
which block of a 1-D or 2-D array, drawn with ``rich`` as JAX draws it (same layout, so the
printed tables match). ``rich`` is optional, as for JAX: without it the functions raise.

Layout (JAX's): each block is a cell whose width is its fraction of the columns times
``25 * scale`` characters times the array's aspect ratio, clamped to ``[min_width, max_width]``,
and whose height is its fraction of the rows times ``10 * scale`` lines (1-D arrays: one line).
The label ("CPU 0,1") is centred. With a colour terminal and matplotlib, cells are coloured
from the ``tab20b`` map in JAX's order; otherwise they are boxed.
"""
import importlib.util

import numpy as np

_HEIGHT_TO_WIDTH = 2.5    # a character cell is about 2.5 times as tall as it is wide


def _block_position(size, index):
    """(block number, block length) along one dimension of a device's index slice."""
    if isinstance(index, (int, np.integer)):
        return int(index), 1
    start = 0 if index.start is None else index.start
    stop = size if index.stop is None else index.stop
    length = stop - start
    return (start // length if length else 0), length


def _grid(shape, sharding):
    """{(row, col): (device ids, height fraction or None, width fraction)} over the blocks."""
    cells = {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        places = [_block_position(n, i) for n, i in zip(shape, index)]
        if len(shape) == 2:
            (row, h), (col, w) = places
            key, height, width = (row, col), h / shape[0], w / shape[1]
        else:
            (col, w), = places
            key, height, width = (0, col), None, w / shape[0]
        ids, _, _ = cells.setdefault(key, (set(), height, width))
        ids.add(device.id)
    return cells


def _colors(color_map, n):
    """Colours for n cells: evenly spaced along the map, visited with a stride of about n/2 so
    neighbouring cells differ (JAX's order)."""
    values = np.linspace(0, 1, n)
    step = n // 2 + (n % 2 == 0)
    idx = 0
    for _ in range(n):
        r, g, b = (int(c * 255) for c in color_map(values[idx])[:3])
        yield f"#{r:02X}{g:02X}{b:02X}"
        idx = (idx + step) % n


def _text_color(background):
    r, g, b = (int(background[k:k + 2], 16) for k in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9, max_width=80,
                       color_map=None):
    """Print which device holds which block of an array of ``shape`` placed by ``sharding``."""
    if importlib.util.find_spec("rich") is None:
        raise ValueError("`visualize_sharding` requires `rich` to be installed "
                         "(pip install rich).")
    import rich.align
    import rich.box
    import rich.console
    import rich.padding
    import rich.style
    import rich.table

    shape = tuple(shape)
    if not 1 <= len(shape) <= 2:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions, "
                         f"got shape {shape}.")
    console = rich.console.Console(width=max_width)
    use_color = use_color and console.color_system is not None
    if use_color and color_map is None:
        try:
            import matplotlib
            color_map = matplotlib.colormaps["tab20b"]
        except ModuleNotFoundError:
            use_color = False
    cells = _grid(shape, sharding)
    n_rows = max(r for r, _ in cells) + 1
    n_cols = max(c for _, c in cells) + 1
    kind = next(iter(sharding.device_set)).platform.upper()
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    colors = _colors(color_map, n_rows * n_cols) if use_color else None
    table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0,
                             highlight=not use_color, pad_edge=False,
                             box=None if use_color else rich.box.SQUARE)
    for r in range(n_rows):
        row = []
        for c in range(n_cols):
            ids, height_frac, width_frac = cells[r, c]
            label = f"{kind} " + ",".join(map(str, sorted(ids)))
            width = min(max(int(width_frac * base_width * _HEIGHT_TO_WIDTH), min_width), max_width)
            height = 1 if height_frac is None else int(height_frac * base_height)
            left, extra = divmod(width - len(label) - 2, 2)
            top, extra_v = divmod(height - 2, 2)
            pads = [top, left + extra, top + extra_v, left]       # top, right, bottom, left
            style = rich.style.Style()
            if use_color:
                background = next(colors)
                style = rich.style.Style(bgcolor=background, color=_text_color(background))
                pads = [p + 1 for p in pads]
            row.append(rich.padding.Padding(rich.align.Align(label, "center", vertical="middle"),
                                            tuple(max(p, 0) for p in pads), style=style))
        table.add_row(*row)
    console.print(table, end="\n\n")


def visualize_array_sharding(arr, **kwargs):
    """``visualize_sharding`` of a concrete array's shape and sharding."""
    sharding = getattr(arr, "sharding", None)
    if sharding is None or not hasattr(arr, "shape"):
        raise TypeError("visualize_array_sharding: expected a concrete Array, got "
                        f"{type(arr).__name__}; inside jit use jax.debug.inspect_array_sharding.")
    return visualize_sharding(arr.shape, sharding, **kwargs)
