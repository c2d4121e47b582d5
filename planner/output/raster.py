"""A small raster canvas for the map picture: Pillow primitives in map metres, antialiased by supersampling.

Why not matplotlib: importing it and building one figure cost about 0.4 CPU s of a
1.5 s ``sortie plan`` (issue 27: the import alone generates every artist's property
docstrings); the map needs filled polygons, lines, dashes, hatching, circles, markers
and boxed text, which Pillow draws in a few milliseconds. Everything is drawn at
``SUPERSAMPLE`` times the size and reduced once with a box filter: smooth edges,
and the same bytes for the same drawing (no clock, no metadata in the PNG).

Sizes follow matplotlib's conventions so the picture reads as before: line widths
and font sizes in points at ``DPI`` 100 (1 pt = 100/72 px), marker sizes as areas in
pt². Text uses DejaVu Sans from matplotlib's bundled fonts (located without importing
matplotlib), else Pillow's own bundled font: package data of pinned dependencies, read
as an import reads a module, never a font of the host, so the same input gives the
same picture wherever it is drawn (matplotlib read the same file before).
"""

from __future__ import annotations

import importlib.util
import io
import math
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageChops, ImageColor, ImageDraw, ImageFont

__all__ = ["Canvas", "DPI", "SUPERSAMPLE", "rgba"]

DPI = 100
SUPERSAMPLE = 2
_PX_PER_PT = DPI / 72.0
_fonts: dict[float, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}

XY = tuple[float, float]


def rgba(colour: str, alpha: float = 1.0) -> tuple[int, int, int, int]:
    """``#rrggbb`` (or a colour name) with ``alpha`` in 0..1 as an RGBA tuple."""
    r, g, b = ImageColor.getrgb(colour)[:3]
    return (r, g, b, int(round(255 * max(0.0, min(1.0, alpha)))))


def _bundled_font() -> str:
    """Where matplotlib's bundled DejaVu Sans lies (its package located by the import system, not imported)."""
    spec = importlib.util.find_spec("matplotlib")
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    return str(Path(roots[0]) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf") if roots else ""


def _font(size_px: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The text font at ``size_px``: package data of a pinned dependency, like an import (never a system font)."""
    key = round(size_px, 2)
    if key not in _fonts:
        try:
            _fonts[key] = ImageFont.truetype(_bundled_font(), max(1, int(round(size_px))))
        except OSError:  # no matplotlib: Pillow's own bundled font
            _fonts[key] = ImageFont.load_default(max(1.0, size_px))
    return _fonts[key]


class Canvas:
    """``width_px`` × ``height_px`` showing ``x_lim`` × ``y_lim`` metres (y up), drawn supersampled."""

    def __init__(self, width_px: int, height_px: int, x_lim: XY, y_lim: XY, background: str) -> None:
        self.width_px, self.height_px = width_px, height_px
        self.s = SUPERSAMPLE
        self.x_lim, self.y_lim = x_lim, y_lim
        self.image = Image.new("RGB", (width_px * self.s, height_px * self.s), rgba(background)[:3])
        self.draw = ImageDraw.Draw(self.image, "RGBA")  # RGBA draws blend onto the RGB image

    # ---- coordinates
    def px(self, x: float, y: float) -> XY:
        """Map metres → supersampled pixels."""
        fx = (x - self.x_lim[0]) / (self.x_lim[1] - self.x_lim[0])
        fy = (self.y_lim[1] - y) / (self.y_lim[1] - self.y_lim[0])
        return (fx * self.width_px * self.s, fy * self.height_px * self.s)

    def axes(self, fx: float, fy: float) -> XY:
        """A point given as a fraction of the picture (0,0 bottom left, as matplotlib's axes) → pixels."""
        return (fx * self.width_px * self.s, (1.0 - fy) * self.height_px * self.s)

    def pt(self, points: float) -> float:
        """A length in points → supersampled pixels."""
        return points * _PX_PER_PT * self.s

    # ---- shapes (coordinates in map metres)
    def polygon(self, ring: Sequence[XY], fill: tuple[int, ...] | None, outline: str | None, width_pt: float,
                dashed: bool = False) -> None:
        pts = [self.px(*p) for p in ring]
        if len(pts) < 3:
            return
        if fill is not None:
            self.draw.polygon(pts, fill=fill)
        if outline is not None and width_pt > 0:
            closed = pts + [pts[0]]
            if dashed:
                self._dashed(closed, rgba(outline), width_pt, (3.7, 1.6))
            else:
                self._line(closed, rgba(outline), width_pt)

    def hatch(self, ring: Sequence[XY], colour: str, spacing_pt: float = 6.0, width_pt: float = 0.8) -> None:
        """Diagonal lines (``////``) over the polygon ``ring``, clipped to it."""
        pts = [self.px(*p) for p in ring]
        if len(pts) < 3:
            return
        left, top = int(min(x for x, _ in pts)), int(min(y for _, y in pts))
        w, h = int(max(x for x, _ in pts)) + 2 - left, int(max(y for _, y in pts)) + 2 - top
        mask = Image.new("L", (w, h), 0)
        ImageDraw.Draw(mask).polygon([(x - left, y - top) for x, y in pts], fill=255)
        lines = Image.new("L", (w, h), 0)
        d = ImageDraw.Draw(lines)
        step, width = max(2.0, self.pt(spacing_pt)), max(1, int(round(self.pt(width_pt))))
        k = -float(h) - ((left + top) % step)  # the same phase wherever the polygon lies
        while k < w:
            d.line([(k, h), (k + h, 0)], fill=255, width=width)
            k += step
        self.image.paste(Image.new("RGB", (w, h), rgba(colour)[:3]), (left, top), ImageChops.multiply(lines, mask))

    def circle(self, centre: XY, radius_m: float, fill: tuple[int, ...], outline: str, width_pt: float) -> None:
        cx, cy = self.px(*centre)
        r = radius_m / (self.x_lim[1] - self.x_lim[0]) * self.width_px * self.s
        self.draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fill, outline=rgba(outline),
                          width=max(1, int(round(self.pt(width_pt)))))

    def line(self, points: Sequence[XY], colour: tuple[int, ...], width_pt: float,
             dashes_pt: tuple[float, float] | None = None, round_caps: bool = False) -> None:
        pts = [self.px(*p) for p in points]
        if dashes_pt is None:
            self._line(pts, colour, width_pt, round_caps)
        else:
            self._dashed(pts, colour, width_pt, dashes_pt)

    def dot(self, at: XY, area_pt2: float, fill: str, edge: str | None = None, edge_pt: float = 0.0) -> None:
        """A round marker of ``area_pt2`` (matplotlib's scatter size)."""
        x, y = self.px(*at)
        r = self.pt(math.sqrt(area_pt2)) / 2.0
        if edge is not None and edge_pt > 0:
            e = self.pt(edge_pt) / 2.0
            self.draw.ellipse([x - r - e, y - r - e, x + r + e, y + r + e], fill=rgba(edge))
        self.draw.ellipse([x - r, y - r, x + r, y + r], fill=rgba(fill))

    def triangle(self, at: XY, area_pt2: float, fill: str) -> None:
        """An upward triangle marker of ``area_pt2``."""
        x, y = self.px(*at)
        r = self.pt(math.sqrt(area_pt2)) / 2.0
        self.draw.polygon([(x, y - r), (x - r, y + r * 0.8), (x + r, y + r * 0.8)], fill=rgba(fill))

    # ---- text: ``at`` in pixels (from ``px`` or ``axes``), anchored as Pillow's anchors ("mm", "la", …)
    def text(self, at: XY, text: str, size_pt: float, colour: str, anchor: str = "mm",
             box_alpha: float | None = None, pad_pt: float = 1.0) -> None:
        font = _font(self.pt(size_pt))
        if box_alpha is not None:
            l, t, r, b = self.draw.textbbox(at, text, font=font, anchor=anchor)
            p = self.pt(pad_pt) + self.s
            self.draw.rectangle([l - p, t - p, r + p, b + p], fill=rgba("#ffffff", box_alpha))
        self.draw.text(at, text, font=font, fill=rgba(colour), anchor=anchor)

    # ---- output
    def png(self) -> bytes:
        """The picture at its final size, as PNG bytes (no text chunks: no time, no software)."""
        out = self.image.resize((self.width_px, self.height_px), Image.Resampling.BOX)
        buf = io.BytesIO()
        out.save(buf, format="PNG")
        return buf.getvalue()

    # ---- helpers
    def _line(self, pts: Sequence[XY], colour: tuple[int, ...], width_pt: float, round_caps: bool = False) -> None:
        if len(pts) < 2:
            return
        w = max(1, int(round(self.pt(width_pt))))
        self.draw.line(list(pts), fill=colour, width=w, joint="curve")
        if round_caps:  # as matplotlib draws the sorties
            for x, y in (pts[0], pts[-1]):
                self.draw.ellipse([x - w / 2, y - w / 2, x + w / 2, y + w / 2], fill=colour)

    def _dashed(self, pts: Sequence[XY], colour: tuple[int, ...], width_pt: float, dashes_pt: tuple[float, float]) -> None:
        """A polyline as dashes of ``dashes_pt`` (on, off) in multiples of the line width, as matplotlib scales them."""
        unit = max(width_pt, 1.0)
        on, off = self.pt(dashes_pt[0] * unit), self.pt(dashes_pt[1] * unit)
        w = max(1, int(round(self.pt(width_pt))))
        drawing, left = True, on
        for (x0, y0), (x1, y1) in zip(pts[:-1], pts[1:]):
            seg = math.hypot(x1 - x0, y1 - y0)
            pos = 0.0
            while pos < seg - 1e-9:
                step = min(left, seg - pos)
                if drawing:
                    a, b = pos / seg, (pos + step) / seg
                    self.draw.line([(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)],
                                   fill=colour, width=w)
                pos += step
                left -= step
                if left <= 1e-9:
                    drawing = not drawing
                    left = on if drawing else off
