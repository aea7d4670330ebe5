"""The hot/cold demo's size: inside the cache it is about, a whole number of pages."""

from labkit.chapters.ch00_setup_check import pitfalls


def test_cpu_demo_is_one_mib():
    assert pitfalls.hot_cold_source_bytes("cpu") == 2**20


def test_gpu_demo_is_a_quarter_of_the_l2(monkeypatch):
    from labkit.measure import conditions

    monkeypatch.setattr(conditions, "last_level_cache_bytes", lambda where: 50 * 2**20)
    size = pitfalls.hot_cold_source_bytes("cuda")
    assert size == 50 * 2**20 // 4 // 4096 * 4096 and size % 4096 == 0
    assert 2 * size <= 50 * 2**20 // 2  # source + destination: half the L2
