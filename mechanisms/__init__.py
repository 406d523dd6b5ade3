"""Randomized mechanisms (RP, ALS, the DP schemes built on them and the other schemes of the source papers)."""
