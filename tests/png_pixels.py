"""Read the pixels of an 8-bit RGB or RGBA PNG (what headless Chromium's ``--screenshot`` writes)
with zlib and numpy alone, so a browser test can check what a screenshot shows: which colours
appear, and where. The five PNG row filters are undone as the PNG specification (section 9) defines
them; None, Sub and Up are vectorised, Average and Paeth run per byte."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def read_png(path: Path) -> np.ndarray:
    """The image as an array of shape (height, width, channels), dtype uint8."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), f"unsupported PNG: depth {depth}, colour type {colour}"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    out = np.zeros((height, width * channels), dtype=np.uint8)
    previous = np.zeros(width * channels, dtype=np.uint8)
    for y in range(height):
        kind, row = raw[y, 0], raw[y, 1:]
        if kind == 0:
            line = row.copy()
        elif kind == 1:  # Sub: each byte adds the byte one pixel to its left (a running sum per channel)
            line = np.cumsum(row.reshape(width, channels).astype(np.uint32), axis=0).astype(np.uint8).ravel()
        elif kind == 2:  # Up
            line = (row.astype(np.uint16) + previous).astype(np.uint8)
        else:
            line = _sequential(kind, row.tolist(), previous.tolist(), channels)
        out[y], previous = line, line
    return out.reshape(height, width, channels)


def _sequential(kind: int, row: list[int], up: list[int], bpp: int) -> np.ndarray:
    line = [0] * len(row)
    for i, x in enumerate(row):
        a = line[i - bpp] if i >= bpp else 0
        b, c = up[i], (up[i - bpp] if i >= bpp else 0)
        if kind == 3:  # Average
            line[i] = (x + (a + b) // 2) & 255
        else:  # Paeth: the neighbour closest to a + b - c
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (x + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return np.array(line, dtype=np.uint8)


def rows_with(image: np.ndarray, hex_colour: str) -> np.ndarray:
    """The y coordinates of rows where the colour ``#rrggbb`` appears exactly."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)
    return np.flatnonzero((image[:, :, :3] == rgb).all(axis=2).any(axis=1))
