import numpy as np
import pytest

from ndis.auditor.sampling import adapters, chunks, neighbors
from ndis.core import neighbors as relations


def test_relations_from_core_are_checked_and_constructed():
    D = np.arange(12.0).reshape(4, 3)
    for relation, replacement in (("remove", None), ("zero", None), ("replace", [9.0, 9.0, 9.0]), ("entry", (1, -5.0))):
        D_prime = relations.make(D, relation, 2, replacement)
        assert relations.check(D, D_prime, relation) == 2
    assert relations.check(D, D[:-1], "remove") == 3
    with pytest.raises(ValueError, match="not neighbours under 'zero'"):
        relations.check(D, relations.make(D, "replace", 1, [1.0, 1.0, 1.0]), "zero")
    with pytest.raises(ValueError, match="more than one entry"):
        relations.check(D, relations.make(D, "replace", 1, [1.0, 1.0, 1.0]), "entry")
    with pytest.raises(ValueError, match="allowed: remove, zero, replace, entry"):
        relations.check(D, D, "swap")


def test_neighbour_specs_parse():
    assert relations.Neighbor.parse("remove:worst") == relations.Neighbor("remove", "worst")
    assert relations.Neighbor.parse("zero:7") == relations.Neighbor("zero", 7)
    assert relations.Neighbor.parse("replace") == relations.Neighbor("replace", None)
    assert str(relations.Neighbor.parse("zero:7")) == "zero:7"
    with pytest.raises(ValueError, match="row choice"):
        relations.Neighbor.parse("remove:best")
    with pytest.raises(ValueError, match="a replacement goes with the relations replace"):
        relations.Neighbor("remove", 0, replacement=[1.0])


def test_the_auditor_defines_no_relations_of_its_own():
    # the relations, their parsing, construction and check live in ndis.core.neighbors only
    for name in ("RELATIONS", "ROW_CHOICES", "Neighbor", "check", "make"):
        assert not hasattr(neighbors, name)


def test_worst_neighbor_from_the_mechanism_is_used():
    class Mech:
        def sample(self, D, n, rng):
            return rng.standard_normal((n, 1)) + D.sum()

        def worst_neighbor(self, D, relation):
            return 1, np.delete(D, 1, axis=0)

    D = np.arange(6.0).reshape(3, 2)
    row, D_prime, how = neighbors.select(Mech(), D, "remove", "worst")
    assert (row, how) == (1, "mechanism") and np.array_equal(D_prime, np.delete(D, 1, axis=0))


def test_black_box_selection_uses_the_pilot_it_is_given():
    D = np.arange(20.0).reshape(10, 2)
    seen = []

    def pilot(row, D_prime):
        seen.append(row)
        assert np.array_equal(D_prime, np.delete(D, row, axis=0))
        return -abs(row - 3)  # row 3 is the "most distinguishable"

    rows = neighbors.candidate_rows(D, 10, seed=0)
    row, D_prime, how = neighbors.select(object(), D, "remove", "worst", pilot, n_candidates=10, seed=0)
    assert seen == rows and (row, how) == (3, "screen")
    with pytest.raises(ValueError, match="pilot"):
        neighbors.select(object(), D, "remove", "worst")
    assert neighbors.select(object(), D, "zero", 4)[:1] == (4,)


def test_chunk_seeds_are_the_spawned_children():
    root = np.random.SeedSequence(42)
    children = np.random.SeedSequence(42).spawn(3)
    for j, child in enumerate(children):
        assert chunks.chunk_seed(root, j).generate_state(4).tolist() == child.generate_state(4).tolist()
    assert root.n_children_spawned == 0


def test_signature_detection():
    assert adapters.as_sampler(lambda data, n, rng: None).kind == "batched"
    assert adapters.as_sampler(lambda data, rng: None).kind == "per-sample"
    assert adapters.as_sampler(lambda data, rng, size=3: None).kind == "batched"
    with pytest.raises(TypeError, match="callable"):
        adapters.as_sampler(42)


def test_a_partial_is_read_by_its_own_signature_even_when_it_claims_to_wrap():
    import functools

    def per_sample(data, rng, eps):
        return data

    def batched(data, n, rng, eps):
        return data

    for function, kind in ((per_sample, "per-sample"), (batched, "batched")):
        bound = functools.wraps(function)(functools.partial(function, eps=0.7))  # what resolve used to return
        assert adapters.as_sampler(bound).kind == kind


def test_a_one_candidate_selection_is_the_largest_leverage_row_without_a_pilot():
    from ndis import theory

    D = np.random.default_rng(0).standard_normal((12, 3))
    row, D_prime, how = neighbors.select(object(), D, "remove", "worst", None, n_candidates=1)
    assert (row, how) == (int(np.argmax(theory.leverages(D))), "max-leverage")
    assert np.array_equal(D_prime, np.delete(D, row, axis=0))
