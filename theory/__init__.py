"""Exact privacy spectra delta(eps) of Gaussian-output mechanisms (NDIS and its closed forms).

`theory` imports nothing else of this project.
"""
