"""Statistics on held-out scores: binomial bounds (`bounds`), counts on fixed edges (`histogram`),
the spectrum and its simultaneous bounds (`spectrum`), certified epsilons (`certify`), the verdict on
a claimed (eps, delta) (`verdict`), claimed curves (`claims`) and Gaussian DP (`gdp`)."""
