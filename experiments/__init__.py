"""Datasets, the command line and the reproductions of the source papers' figures and tables."""
