"""The malloc tunables every workflow job inherits."""

from __future__ import annotations

from pipeline.malloc_tunables import MALLOC_TUNABLES, glibc_tunables


def test_the_user_s_own_tunables_come_after_ours_and_so_win():
    assert glibc_tunables({}) == MALLOC_TUNABLES
    mine = "glibc.malloc.mmap_threshold=65536"
    assert glibc_tunables({"GLIBC_TUNABLES": mine}) == f"{MALLOC_TUNABLES}:{mine}"


def test_setting_them_twice_changes_nothing():
    """The Snakefile is parsed again by every job a cluster executor starts."""
    once = glibc_tunables({"GLIBC_TUNABLES": "glibc.malloc.arena_max=2"})
    assert glibc_tunables({"GLIBC_TUNABLES": once}) == once
