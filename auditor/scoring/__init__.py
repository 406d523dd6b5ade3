"""Scoring: feature maps (`features`), the scorers and their registry (`scorers`, with `density`,
`mlp`, `segments`, `spline`), and the choice among them by validation log-loss (`selection`)."""
