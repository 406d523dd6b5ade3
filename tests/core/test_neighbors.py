"""The neighbour relations of ndis.core.neighbors: construction, check and specs."""

import numpy as np
import pytest

from ndis.core import neighbors
from ndis.experiments.datasets import synthetic

REPLACEMENTS = {"remove": None, "zero": None, "replace": [1.0, 2.0, 3.0, 4.0], "entry": (3, 0.5)}


@pytest.fixture(scope="module")
def data():
    return synthetic(n=30, d=3, seed=2)


def test_relations(data):
    assert np.array_equal(neighbors.make(data, "remove", 4), np.vstack([data[:4], data[5:]]))
    zeroed = neighbors.make(data, "zero", 4)
    assert np.all(zeroed[4] == 0) and np.array_equal(np.delete(zeroed, 4, 0), np.delete(data, 4, 0))
    replaced = neighbors.make(data, "replace", 2, [1.0, 2.0, 3.0, 4.0])
    assert np.array_equal(replaced[2], [1, 2, 3, 4]) and np.array_equal(np.delete(replaced, 2, 0), np.delete(data, 2, 0))
    changed = neighbors.make(data, "entry", 1, (3, 0.5))
    assert changed[1, 3] == 0.5 and np.sum(changed != data) == 1
    with pytest.raises(ValueError, match="out of range"):
        neighbors.make(data, "remove", 30)
    with pytest.raises(ValueError, match="unknown neighbour relation 'swap'"):
        neighbors.make(data, "swap", 1)


@pytest.mark.parametrize("relation", neighbors.RELATIONS)
def test_make_and_check_round_trip(data, relation):
    for row in (0, 11, len(data) - 1):
        other = neighbors.make(data, relation, row, REPLACEMENTS[relation])
        assert neighbors.check(data, other, relation) == row
    assert not np.shares_memory(other, data)


def test_check_rejects_pairs_that_are_not_neighbours(data):
    replaced = neighbors.make(data, "replace", 1, [1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not neighbours under 'zero'"):
        neighbors.check(data, replaced, "zero")
    with pytest.raises(ValueError, match="more than one entry"):
        neighbors.check(data, replaced, "entry")
    with pytest.raises(ValueError, match="one row deleted"):
        neighbors.check(data, np.delete(data[::-1], 0, 0), "remove")
    with pytest.raises(ValueError, match="allowed: remove, zero, replace, entry"):
        neighbors.check(data, data, "swap")


def test_row_relations_take_no_replacement_and_the_others_need_one(data):
    with pytest.raises(ValueError, match="takes no replacement"):
        neighbors.make(data, "zero", 1, [0.0, 0.0, 0.0, 0.0])
    for relation in ("replace", "entry"):
        with pytest.raises(ValueError, match="needs"):
            neighbors.make(data, relation, 1)


def test_check_relation_and_specs():
    assert neighbors.ROW_RELATIONS == ("remove", "zero") and set(neighbors.ROW_RELATIONS) <= set(neighbors.RELATIONS)
    assert [neighbors.check_relation(r) for r in neighbors.RELATIONS] == list(neighbors.RELATIONS)
    parse = neighbors.Neighbor.parse
    assert (parse("remove:worst"), parse("zero:7"), parse("entry")) == (
        neighbors.Neighbor("remove", "worst"), neighbors.Neighbor("zero", 7), neighbors.Neighbor("entry"))
    with pytest.raises(ValueError, match="row choice"):
        parse("remove:best")
