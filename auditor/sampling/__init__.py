"""Drawing samples: plug-in adapters (`adapters`), seeded chunks on joblib or Dask (`chunks`), and the
black-box choice of the neighbouring row (`neighbors`)."""
