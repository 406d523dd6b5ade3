"""Checks of user input, in one place for every ndis package.

Each check raises ValueError (TypeError for a wrong type) with a message naming the argument, what
was wrong and what is allowed. Numeric parameters may also be given as strings ("300", "1e-5"), so
that command-line `--param k=v` values can be passed through unchanged. Array-valued functions
follow the scipy.stats convention: scalar in, float out; array in, ndarray out.
"""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

T = TypeVar("T")
#: What `np.random.default_rng` takes as a seed: an int, a SeedSequence, a Generator (used as it is) or None.
Seed = int | np.integer | np.random.SeedSequence | np.random.Generator | None
#: What `as_rng` takes: a Generator, or an int seed or SeedSequence that it turns into one.
RngLike = np.random.Generator | int | np.integer | np.random.SeedSequence
#: A number or a flat sequence of numbers (Rényi orders, a grid of eps), as `as_finite_array` takes it.
Floats = float | Sequence[float] | np.ndarray


def _float_array(value: ArrayLike, name: str, failed: Callable[[Exception], Exception]) -> np.ndarray:
    """`value` as a float64 array; `failed(error)` is raised when numpy cannot convert it, and a
    TypeError naming `name` for complex numbers, whose imaginary part numpy's cast would drop with
    only a warning."""
    try:
        array = np.asarray(value)
        is_complex = np.iscomplexobj(array)
        if not is_complex:
            array = array.astype(np.float64, copy=False)
    except (TypeError, ValueError) as error:
        raise failed(error) from None
    if is_complex:
        raise TypeError(f"{name} holds complex numbers, which ndis does not take (their imaginary part would be lost): "
                        "pass the real part and imaginary part as separate real values (np.real, np.imag)")
    return array


def as_finite_array(value: ArrayLike, name: str) -> np.ndarray:
    """float64 array of `value`; ValueError naming `name` if it holds NaN or inf (TypeError for complex
    numbers). An array already validated (by `as_data` or `register`) is returned as it is, without a
    second scan."""
    if isinstance(value, np.ndarray) and _validated(value) is not None:
        return value
    array = _float_array(value, name, lambda error: ValueError(f"{name} must be numeric: {error}"))
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def scalar_or_array(result: ArrayLike, like: ArrayLike) -> float | np.ndarray:
    """A Python float when `like` is a scalar, else an ndarray (scipy.stats convention)."""
    if np.ndim(like) == 0:
        return float(np.asarray(result).reshape(-1)[0])
    return np.asarray(result, dtype=float)


def check_probability(delta: ArrayLike, name: str = "delta") -> np.ndarray:
    """delta as an array, each value strictly inside (0, 1)."""
    delta = as_finite_array(delta, name)
    if np.any((delta <= 0) | (delta >= 1)):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {delta}")
    return delta


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or value is None:
        raise TypeError(f"{name} must be a number, got {value!r}")
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def as_int(name: str, value: object, minimum: int = 1) -> int:
    """An integer >= minimum."""
    number = _number(name, value)
    if not np.isfinite(number) or number != int(number):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if number < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {int(number)}")
    return int(number)


def as_positive(name: str, value: object, allow_zero: bool = False) -> float:
    """A finite float > 0 (or >= 0 with allow_zero)."""
    number = _number(name, value)
    if not np.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    return number


def as_probability(name: str, value: object, allow_zero: bool = False) -> float:
    """A float strictly between 0 and 1 (a target delta), or in [0, 1) with allow_zero (pure DP's delta)."""
    number = _number(name, value)
    if allow_zero and not 0.0 <= number < 1.0:
        raise ValueError(f"{name} must lie in [0, 1), got {value!r}")
    if not allow_zero and not 0.0 < number < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return number


def as_leverage(name: str, value: object) -> float:
    """A leverage or residual share: a float in [0, 1)."""
    number = _number(name, value)
    if not 0.0 <= number < 1.0:
        raise ValueError(f"{name} must lie in [0, 1), got {value!r}")
    return number


def as_bool(name: str, value: object) -> bool:
    """A boolean (also "true"/"false"/"1"/"0" strings)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    raise ValueError(f"{name} must be true or false, got {value!r}")


def as_choice(name: str, value: str, choices: Collection[str]) -> str:
    """One of a fixed set of strings."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def optional(check: Callable[..., T], name: str, value: object, *args: Any) -> T | None:
    """`check(name, value, *args)` unless value is None."""
    return None if value is None else check(name, value, *args)


def one_setting(name: str, given: Mapping[str, object], *ways: tuple[str, ...],
                optional_with: dict[str, int] | None = None, shared: tuple[str, ...] = ()) -> None:
    """Check that the parameters `given` ({name: value or None}) set a scheme's noise in exactly one of
    `ways`, each a tuple of the parameters it needs (e.g. ("sigma",) and ("eps", "delta")).

    A ValueError names the parameters of two ways given together (an explicit sigma would silently
    override the calibration from eps and delta), or the ways when none is complete.
    `optional_with` maps parameters that only some way uses ({"C": 1}: a calibration's row-norm bound)
    to that way's index; they may not be given with another way. `shared` parameters may accompany
    any way (ltm-gauss's delta, which also sets its zero-output rule) and are required only by the
    ways that list them."""
    optional_with = optional_with or {}
    alternatives = ", or ".join(_joined(way) for way in ways)
    members = [set(way) - set(shared) | {key for key, index in optional_with.items() if index == i}
               for i, way in enumerate(ways)]
    started = [i for i, member in enumerate(members) if any(given.get(key) is not None for key in member)]
    if len(started) > 1:
        clashing = ", ".join(f"{key}={given[key]!r}" for key in given
                             if given[key] is not None and any(key in members[i] for i in started))
        raise ValueError(f"{name} takes {alternatives}, only one of them: got {clashing} ({_joined(ways[started[0]])} "
                         "would silently override the rest); give one")
    if not any(all(given.get(key) is not None for key in way) for way in ways):
        raise ValueError(f"{name} needs {alternatives}")


def _joined(names: Sequence[str]) -> str:
    """("eps", "delta", "C") -> "eps, delta and C"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


# Arrays already checked by `as_data`: id -> (weak reference, memo table). Each entry is removed when
# its array is garbage-collected, so an id is never mistaken for a later object's.
_VALIDATED: dict[int, tuple[weakref.ref[np.ndarray], dict[Hashable, Any]]] = {}


def _validated(array: object) -> dict[Hashable, Any] | None:
    """The memo table of `array` if it is a validated read-only array, else None."""
    entry = _VALIDATED.get(id(array))
    return entry[1] if entry is not None and entry[0]() is array else None


def register(array: np.ndarray) -> np.ndarray:
    """Mark a finite float64 array as validated: made read-only and remembered until it is freed.

    For arrays known to be finite by construction (views and stackings of validated data)."""
    array.flags.writeable = False
    if _validated(array) is None:
        key = id(array)
        _VALIDATED[key] = (weakref.ref(array), {})
        weakref.finalize(array, _VALIDATED.pop, key, None)
    return array


def as_data(D: ArrayLike, name: str = "D", min_cols: int = 1) -> np.ndarray:
    """A dataset: a finite 2-D float64 array with at least one row and `min_cols` columns.

    Returns a read-only view of D that is remembered as validated: `as_data` on it again skips the
    O(nd) finiteness scan, and `memo` can attach derived quantities to it. The view shares memory
    with D, so D must not be modified while the view is in use."""
    known = isinstance(D, np.ndarray) and _validated(D) is not None
    array = D if isinstance(D, np.ndarray) and known else _float_array(
        D, name, lambda error: TypeError(f"{name} must be a numeric 2-D array (rows = records)"))
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows = records, columns = attributes), got shape {array.shape}")
    if array.shape[0] < 1 or array.shape[1] < min_cols:
        raise ValueError(f"{name} must have at least 1 row and {min_cols} column(s), got shape {array.shape}")
    if known:
        return array
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first")
    return register(array.view())


def memo(D: np.ndarray, key: Hashable, compute: Callable[[np.ndarray], T]) -> T:
    """compute(D), computed once per validated dataset D (an `as_data` result) and kept with it;
    for any other array compute(D) is simply returned."""
    table = _validated(D)
    if table is None:
        return compute(D)
    if key not in table:
        table[key] = compute(D)
    return table[key]


def as_rng(rng: RngLike) -> np.random.Generator:
    """A numpy Generator (an int seed or a SeedSequence is turned into one)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer, np.random.SeedSequence)) and not isinstance(rng, bool):  # numpy's seeds
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy.random.Generator (or an int seed), got {type(rng).__name__}")


def max_row_norm(D: np.ndarray) -> float:
    """max_i ||D_(i)||_2, the smallest valid row-norm bound for D."""
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", D, D))))


def row_norm_bound(D: np.ndarray, C: float | None) -> float:
    """The row-norm bound C of a mechanism on D: C itself, checked to cover every row of D, or, when
    C is None, the data-dependent default max_i ||D_(i)||. That default is what the experiments of
    Lu et al. (2023, NDIS) use; it is not a bound over all datasets, which standard DP needs."""
    largest = max_row_norm(D)
    if C is None:
        if largest == 0:
            raise ValueError("every row of D is zero; give the row-norm bound C explicitly")
        return largest
    if C < largest * (1 - 1e-12):
        raise ValueError(
            f"the row-norm bound C={C:.6g} is smaller than the largest row norm of the data ({largest:.6g}); "
            "C must bound every row (use C >= max row norm, or C=None for the data-dependent default)"
        )
    return C


def check_full_rank(R: np.ndarray, what: str, n_rows: int) -> None:
    """Raise if the triangular factor R (R^T R = X^T X) shows X to be numerically rank-deficient."""
    k = R.shape[1]
    if R.shape[0] < k:
        raise ValueError(f"{what} has fewer rows ({n_rows}) than columns ({k}); full column rank is required")
    singular = np.linalg.svd(R, compute_uv=False)
    if singular[-1] <= singular[0] * max(n_rows, k) * np.finfo(float).eps:
        raise ValueError(
            f"{what} is rank-deficient (its {k} columns are linearly dependent); full column rank is required: "
            "drop collinear columns, or use a mechanism that appends sigma*I rows"
        )


def as_eps(eps: ArrayLike) -> np.ndarray:
    """eps values as a float array of the same shape (scalar in, 0-d array out).

    One rule everywhere in ndis: eps must be finite; negative values are allowed, since the
    hockey-stick divergence delta(eps) is defined for every real eps (and is >= 1 - e^eps there).
    """
    return as_finite_array(eps, "eps")


def as_eps_grid(eps: ArrayLike) -> np.ndarray:
    """A non-empty 1-D grid of eps values (a scalar becomes a one-point grid), under `as_eps`'s rule."""
    grid = as_eps(eps)
    if grid.ndim > 1 or grid.size == 0:
        raise ValueError(f"eps must be a number or a non-empty 1-D grid of numbers, got shape {grid.shape}")
    return grid.reshape(-1)
