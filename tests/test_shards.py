"""``--reb-shard I/N``: the (repository, target) pairs split over machines, disjoint, covering
and stable (``distribute.parse_shard``, ``shard_keys``).
"""

from __future__ import annotations

import pytest

from pytest_reb.runs.shards import parse_shard, shard_keys


def test_parse_shard() -> None:
    assert parse_shard("2/4") == (2, 4) and parse_shard(" 1 / 1 ") == (1, 1)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="I/N"):
            parse_shard(bad)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_shards_are_disjoint_covering_balanced_and_stable(count: int) -> None:
    keys = {f"owner/repo{r}|agent{a}@image" for r in range(44) for a in range(3)}
    shards = [shard_keys(keys, (i, count)) for i in range(1, count + 1)]
    assert set().union(*shards) == keys
    assert sum(len(s) for s in shards) == len(keys)  # disjoint
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    # another machine builds the set in another order and gets the same split
    assert [shard_keys(set(sorted(keys, reverse=True)), (i, count))
            for i in range(1, count + 1)] == shards


def test_more_shards_than_pairs_leaves_some_empty() -> None:
    shards = [shard_keys({"a|x", "b|x"}, (i, 3)) for i in (1, 2, 3)]
    assert shards == [{"a|x"}, {"b|x"}, set()]
