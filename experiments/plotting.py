"""Plots of privacy spectra: delta(eps) on a linear and/or a logarithmic delta axis."""

from __future__ import annotations

import pathlib
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from numpy.typing import ArrayLike  # noqa: E402

#: `plt` is pyplot with the Agg backend selected, for the reproductions' own figures.
__all__ = ["STYLES", "plot_curves", "plot_tradeoff", "plt", "save"]

STYLES: dict[str, dict[str, Any]] = {"max": dict(color="black", lw=2.0), "forward": dict(color="tab:blue", ls="--"),
                                     "reverse": dict(color="tab:orange", ls=":")}


def plot_curves(path: str | pathlib.Path, eps: ArrayLike, curves: dict[str, ArrayLike], title: str,
                scale: str = "both") -> pathlib.Path:
    """Write a PNG with one line per named curve; scale 'linear', 'log' or 'both' (two panels)."""
    scales = ("linear", "log") if scale == "both" else (scale,)
    fig, axes = plt.subplots(1, len(scales), figsize=(5.5 * len(scales), 4.2), squeeze=False)
    for ax, kind in zip(axes[0], scales, strict=True):
        for name, values in curves.items():
            values = np.asarray(values, dtype=float)
            shown = np.where(values > 0, values, np.nan) if kind == "log" else values
            ax.plot(eps, shown, label=name, **STYLES.get(name, {}))
        ax.set_yscale(kind)
        if kind == "log":
            ax.set_ylim(top=2.0)
        ax.set_xlabel("eps")
        ax.set_ylabel("delta(eps)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(title, fontsize=10, parse_math=False, usetex=False)  # a $ in a data path is a dollar sign
    return save(fig, path)


def save(fig: Figure, path: str | pathlib.Path) -> pathlib.Path:
    """Lay out, write as PNG and close a figure."""
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return pathlib.Path(path)


def plot_tradeoff(path: str | pathlib.Path, curves: dict[str, tuple[ArrayLike, ArrayLike]], title: str) -> pathlib.Path:
    """Write a PNG of trade-off curves {name: (type I errors, type II errors)} in the panel style of an
    audit's trade-off view (`ndis.auditor.reporting.report`), with the diagonal of perfect privacy."""
    fig, axis = plt.subplots(figsize=(5.0, 4.6))
    for name, (alpha, beta) in curves.items():
        axis.plot(alpha, beta, lw=1.3, label=name)
    axis.plot([0, 1], [1, 0], color="grey", lw=0.8, ls="--", label="perfect privacy")
    axis.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error", ylabel="type II error")
    axis.set_title("trade-off view", fontsize=10)
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return save(fig, path)
