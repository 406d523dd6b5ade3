"""The registry of schemes by name: `names()`, `get(name, **params)`, `describe()`."""

from __future__ import annotations

import functools
import importlib
import inspect
import pathlib
import sys
from types import ModuleType
from typing import Any

from .als import ApproximateLeastSquares, ISIT18LeastSquares, NoisyALS, RelativeALS, RPLeastSquares, SheffetLeastSquares
from .base import Mechanism
from .gaussian import GaussianLS, GaussianMechanism
from .isit18 import ISIT18AdditiveNoise, ISIT18Projection
from .masking import MaskBlocks, MaskNoiseOnly, MaskNoiseThenRotate, MaskRotateThenNoise
from .ols import NoisyOLS, RelativeOLS
from .rp import (
    NoisyLinearCombination,
    NoisyProjection,
    RandomLinearCombination,
    RandomProjection,
    RelativeProjection,
    SheffetProjection,
)
from .sketching import LTMGauss, LTMLaplace, LTMLocal, LTMLowRank, LTMRidge
from .zoo import CLASSES as ZOO

_CLASSES: tuple[type[Mechanism], ...] = (
    GaussianMechanism, GaussianLS, RandomProjection, RandomLinearCombination, ApproximateLeastSquares,
    SheffetLeastSquares, NoisyProjection, NoisyLinearCombination, NoisyOLS, NoisyALS, RPLeastSquares,
    RelativeProjection, RelativeOLS, RelativeALS, ISIT18LeastSquares, SheffetProjection,
    # other schemes (ISIT18, Masking, LTM); isit18-rp (Showkatbakhsh et al. 2018 itself) replaces
    # rp.ISIT18Projection, whose (eps, delta) calibration it keeps as sigma_mode="data"
    ISIT18AdditiveNoise, ISIT18Projection, MaskNoiseOnly, MaskNoiseThenRotate, MaskRotateThenNoise, MaskBlocks,
    LTMGauss, LTMLaplace, LTMLowRank, LTMRidge, LTMLocal,
    # the zoo: textbook DP algorithms and their published buggy variants, with known truth
    *ZOO,
)
_REGISTRY: dict[str, type[Mechanism]] = {cls.name: cls for cls in _CLASSES}


def names() -> list[str]:
    """Every registered scheme name."""
    return list(_REGISTRY)


def _lookup(name: str) -> type[Mechanism]:
    if name not in _REGISTRY:
        raise ValueError(f"unknown mechanism {name!r}; known mechanisms: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def parameters(name: str) -> tuple[str, ...]:
    """The parameter names of the scheme registered as `name`."""
    return tuple(_lookup(name).param_docs)


def get(name: str, **params: Any) -> Mechanism:
    """The mechanism registered as `name`, constructed with `params` (validated)."""
    cls = _lookup(name)
    unknown = sorted(set(params) - set(cls.param_docs))
    if unknown:
        allowed = ", ".join(cls.param_docs) or "none"
        raise ValueError(f"{name} has no parameter(s) {', '.join(unknown)}; its parameters are: {allowed}")
    missing = [arg.name for arg in inspect.signature(cls).parameters.values()
               if arg.default is inspect.Parameter.empty and arg.name not in params]
    if missing:
        raise ValueError(f"{name} needs the parameter(s) {', '.join(missing)}; its parameters are: "
                         f"{', '.join(cls.param_docs)}")
    return cls(**params)


def describe() -> dict[str, str]:
    """name -> one-paragraph description with the parameters (for `ndis mechanisms`)."""
    return {
        name: cls.summary + "".join(f"\n  {key}: {doc}" for key, doc in cls.param_docs.items())
        for name, cls in _REGISTRY.items()
    }


def resolve(spec: str, **params: Any) -> Any:
    """The mechanism named by `spec`: a registered name (`get(spec, **params)`) or a third-party
    `module.path:attribute`.

    The module is imported as installed (`_import_plug_in`); only a module found nowhere on
    `sys.path` is looked for in the working directory. The attribute may be a Mechanism-like
    class (instantiated with `params`), an object with `sample`, or a batched / per-sample callable
    (`params` bound as keyword arguments by a `functools.partial` named after it, whose signature
    shows the remaining parameters).
    """
    if ":" not in spec:
        return get(spec, **params)
    module_name, _, attribute = spec.partition(":")
    module = _import_plug_in(module_name, spec)
    if not hasattr(module, attribute):
        raise ValueError(f"module {module_name!r} has no attribute {attribute!r}")
    target = getattr(module, attribute)
    if isinstance(target, type):
        return target(**params)
    if params:
        if not callable(target):
            raise ValueError(f"{spec} is not callable, so it cannot take parameters {sorted(params)}")
        bound = functools.partial(target, **params)  # its signature is the partial's: kinds are detected right
        # a partial object takes attributes: named and documented after the target
        bound.__name__ = getattr(target, "__name__", spec)  # type: ignore[attr-defined]
        bound.__doc__ = getattr(target, "__doc__", None)
        return bound
    return target


def _import_plug_in(module_name: str, spec: str) -> ModuleType:
    """The module `module_name`, imported as installed; when no module of that name is found on
    `sys.path`, the working directory is appended to it (after every installed package, so that a
    user's `theory.py` or `mechanisms.py` never shadows a module ndis relies on) and the import is
    tried again. The directory stays on `sys.path` only when the module was found there (joblib's
    worker processes import the plug-in again by name)."""
    here = str(pathlib.Path.cwd())
    appended = False
    while True:
        try:
            return importlib.import_module(module_name)
        except ImportError as error:
            absent = isinstance(error, ModuleNotFoundError) and (
                error.name == module_name or module_name.startswith(f"{error.name}."))
            if absent and not appended and here not in sys.path and "" not in sys.path:
                sys.path.append(here)
                importlib.invalidate_caches()
                appended = True
                continue
            if absent and appended:
                sys.path.remove(here)
            reason = f"no module of that name is installed or in the working directory {here}" if absent else error
            raise ValueError(f"cannot import module {module_name!r} for mechanism {spec!r}: {reason}") from None
