import numpy as np
import pytest

from ndis.auditor import neighbors, sampling


def test_relations_are_checked_and_constructed():
    D = np.arange(12.0).reshape(4, 3)
    for relation, replacement in (("remove", None), ("zero", None), ("replace", [9.0, 9.0, 9.0]), ("entry", (1, -5.0))):
        D_prime = neighbors.make(D, relation, 2, replacement)
        assert neighbors.check(D, D_prime, relation) == 2
    assert neighbors.check(D, D[:-1], "remove") == 3
    with pytest.raises(ValueError, match="not neighbours under 'zero'"):
        neighbors.check(D, neighbors.make(D, "replace", 1, [1.0, 1.0, 1.0]), "zero")
    with pytest.raises(ValueError, match="more than one entry"):
        neighbors.check(D, neighbors.make(D, "replace", 1, [1.0, 1.0, 1.0]), "entry")
    with pytest.raises(ValueError, match="allowed: remove, zero, replace, entry"):
        neighbors.check(D, D, "swap")


def test_neighbour_specs_parse():
    assert neighbors.parse("remove:worst") == ("remove", "worst")
    assert neighbors.parse("zero:7") == ("zero", 7)
    assert neighbors.parse("replace") == ("replace", None)
    with pytest.raises(ValueError, match="row choice"):
        neighbors.parse("remove:best")


def test_worst_neighbor_from_the_mechanism_is_used():
    class Mech:
        def sample(self, D, n, rng):
            return rng.standard_normal((n, 1)) + D.sum()

        def worst_neighbor(self, D, relation):
            return 1, np.delete(D, 1, axis=0)

    D = np.arange(6.0).reshape(3, 2)
    row, D_prime, how = neighbors.select(Mech(), D, "remove", "worst")
    assert (row, how) == (1, "mechanism") and np.array_equal(D_prime, np.delete(D, 1, axis=0))


def test_chunk_seeds_are_the_spawned_children():
    root = np.random.SeedSequence(42)
    children = np.random.SeedSequence(42).spawn(3)
    for j, child in enumerate(children):
        assert sampling.chunk_seed(root, j).generate_state(4).tolist() == child.generate_state(4).tolist()
    assert root.n_children_spawned == 0


def test_signature_detection():
    assert sampling.as_sampler(lambda data, n, rng: None).kind == "batched"
    assert sampling.as_sampler(lambda data, rng: None).kind == "per-sample"
    assert sampling.as_sampler(lambda data, rng, size=3: None).kind == "batched"
    with pytest.raises(TypeError, match="callable"):
        sampling.as_sampler(42)
