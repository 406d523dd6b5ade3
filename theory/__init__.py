"""Exact privacy spectra delta(eps) of Gaussian-output mechanisms (NDIS and its closed forms).

`theory` imports nothing of ndis but `ndis.core`. Every delta here is computed as ln delta by a
saddle-point contour integral (`theory.quadratic_loss`), never by subtracting probabilities.
"""

from .als import als_delta, als_log_delta, ols_sigma
from .als_exact import ExactALSSpectrum, als_exact_delta
from .baselines import isit18_column_bound, isit18_mi_epsilon, isit18_sigma, sheffet_c2
from .gaussian import classic_gaussian_sigma, gaussian_delta, gaussian_log_delta, gaussian_mu, gaussian_sigma
from .gaussian_pair import GaussianLaw, GaussianPair
from .leverage import augment, leverages, ols_fit, ols_sensitivities, residual_shares, split_regression
from .quadratic_loss import QuadraticLoss
from .rp import rp_delta, rp_leverage_threshold, rp_log_delta, rp_sigma
from .spectrum import Spectrum, spectrum
from .worst_rows import (data_leverages, leverage_residual, max_als_delta_row, max_leverage_row, max_sensitivity_row,
                         pareto_frontier)

__all__ = [
    "ExactALSSpectrum", "GaussianLaw", "GaussianPair", "QuadraticLoss", "Spectrum",
    "als_delta", "als_exact_delta", "als_log_delta", "augment", "classic_gaussian_sigma", "data_leverages",
    "gaussian_delta", "gaussian_log_delta", "gaussian_mu", "gaussian_sigma", "isit18_column_bound",
    "isit18_mi_epsilon", "isit18_sigma", "leverage_residual", "leverages", "max_als_delta_row",
    "max_leverage_row", "max_sensitivity_row", "ols_fit", "ols_sensitivities", "ols_sigma",
    "pareto_frontier", "residual_shares", "rp_delta", "rp_leverage_threshold", "rp_log_delta",
    "rp_sigma", "sheffet_c2", "spectrum", "split_regression",
]
