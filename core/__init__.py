"""The kernel every other ndis package builds on: argument and dataset validation, the eps grid,
neighbour relations and the two-direction privacy curve. It imports nothing else of ndis."""
