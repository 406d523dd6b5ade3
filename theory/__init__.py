"""Exact privacy spectra delta(eps) of Gaussian-output mechanisms (NDIS and its closed forms).

`theory` imports nothing of ndis but `ndis.core`. Every delta here is computed as ln delta by a
saddle-point contour integral (`theory.quadratic_loss`), never by subtracting probabilities.

The calibrations and exact pair curves of the other source papers (docs/references.md) live here
too, one module per paper: `sheffet` (Sheffet 2019), `isit18` [ISIT18], `sketching` [LTM] and
`masking` [Masking]; and `zoo`, the exact curves of the textbook DP algorithms and their buggy
variants (Laplace, report-noisy-max, SVT). Mechanisms call them.

Every exact curve is a `PrivacyProfile` (`theory.profile`), evaluable at any eps in both directions,
and they combine: `compose` (exact for Gaussian pairs, through dp_accounting's privacy-loss
distributions otherwise), `poisson_subsample`, `subsample_without_replacement` (an upper bound),
`renyi_divergence` / `zcdp_rho` / `rdp_epsilon` (with `rdp_to_dp` / `rdp_delta`, the optimal RDP conversion),
`tradeoff` (the f-DP view), `to_pld()` and `from_pld` (the hand-off to dp_accounting, imported only
when used: `pip install "ndis[accounting]"`).
"""

from .als import als_delta, als_log_delta, als_pair, ols_sigma
from .als_exact import ExactALSSpectrum, als_exact_delta
from .composition import compose
from .gaussian import (
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_log_delta,
    gaussian_mu,
    gaussian_sigma,
)
from .gaussian_pair import GaussianLaw, GaussianLosses, GaussianPair
from .isit18 import (
    entry_flip_eigenvalues,
    isit18_column_bound,
    isit18_mi_epsilon,
    isit18_sigma,
    mi_delta,
    mi_noise_variance,
    rp_noise_variance,
)
from .leverage import augment, leverages, ols_fit, ols_sensitivities, residual_shares, split_regression
from .masking import chi2_pair_delta, cor35_sigma, ncx2_logpdf, thm32_sigma, thm34_sigma, wishart_clt
from .pld import DiscretizationWarning, PLDProfile, from_pld
from .profile import PrivacyProfile, WorstCase
from .quadratic_loss import QuadraticLoss
from .rdp_conversion import rdp_delta, rdp_to_dp
from .renyi import rdp_epsilon, renyi_divergence, zcdp_rho
from .rp import rp_delta, rp_leverage_threshold, rp_log_delta, rp_pair, rp_sigma
from .sheffet import sheffet_c2
from .sketching import eq4_variance, laplace_scale, local_variance, min_clients, resampled_sketch_delta
from .spectrum import Spectrum, spectrum
from .subsampling import PoissonSubsampled, WithoutReplacement, poisson_subsample, subsample_without_replacement
from .tradeoff import tradeoff
from .worst_rows import (
    data_leverages,
    leverage_residual,
    max_als_delta_row,
    max_leverage_row,
    max_sensitivity_row,
    pareto_frontier,
)
from .zoo import (
    discrete_delta,
    discrete_epsilon,
    gaussian_shift_delta,
    isvt4_delta,
    laplace_delta,
    laplace_epsilon,
    noisy_max_index_probabilities,
    noisy_max_value_delta,
    noisy_max_value_epsilon,
    svt_outcomes,
    svt_probabilities,
)

__all__ = [
    "DiscretizationWarning", "ExactALSSpectrum", "GaussianLaw", "GaussianLosses", "GaussianPair", "PLDProfile",
    "PoissonSubsampled", "PrivacyProfile", "QuadraticLoss", "Spectrum", "WithoutReplacement", "WorstCase", "als_delta",
    "als_exact_delta", "als_log_delta", "als_pair", "augment", "chi2_pair_delta", "classic_gaussian_sigma", "compose",
    "cor35_sigma", "data_leverages", "discrete_delta", "discrete_epsilon", "entry_flip_eigenvalues", "eq4_variance",
    "from_pld", "gaussian_delta", "gaussian_epsilon", "gaussian_log_delta", "gaussian_mu", "gaussian_shift_delta",
    "gaussian_sigma", "isit18_column_bound", "isit18_mi_epsilon", "isit18_sigma", "isvt4_delta", "laplace_delta",
    "laplace_epsilon", "laplace_scale", "leverage_residual", "leverages", "local_variance", "max_als_delta_row",
    "max_leverage_row", "max_sensitivity_row", "mi_delta", "mi_noise_variance", "min_clients", "ncx2_logpdf",
    "noisy_max_index_probabilities", "noisy_max_value_delta", "noisy_max_value_epsilon", "ols_fit", "ols_sensitivities",
    "ols_sigma", "pareto_frontier", "poisson_subsample", "rdp_delta", "rdp_epsilon", "rdp_to_dp", "renyi_divergence",
    "resampled_sketch_delta", "residual_shares", "rp_delta", "rp_leverage_threshold", "rp_log_delta",
    "rp_noise_variance", "rp_pair", "rp_sigma", "sheffet_c2", "spectrum", "split_regression",
    "subsample_without_replacement", "svt_outcomes", "svt_probabilities", "thm32_sigma", "thm34_sigma", "tradeoff",
    "wishart_clt", "zcdp_rho",
]
