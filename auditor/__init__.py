"""Black-box estimation of a mechanism's privacy spectrum from samples."""
