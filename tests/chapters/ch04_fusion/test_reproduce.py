"""Chapter 04's reproduce.py: C18 and C19 measured only where they can be (a GPU; Triton for
C19), and the numbers each verdict is decided by, read from its evidence."""

import pytest
import torch

from labkit import claims
from labkit.chapters.ch04_fusion import reproduce


def test_without_a_gpu_nothing_is_measured():
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the job measures C18 and C19")
    assert reproduce.measure_verdicts(quick=True) == []


def test_the_deciding_numbers_are_read_from_the_evidence():
    c18 = claims.get("C18").judge(dict(eager_per_launch_us=6.9, graph_per_node_us=1.26,
                                       graph_interval_us=[1.25, 1.26], fit_r_squared=0.99,
                                       graph_launch_gap_us=0.256, graph_kernel_us=0.67))
    found = reproduce.deciding_ratios(c18)
    assert found["graph launch gap (us)"] == 0.256 and found["eager per launch (us)"] == 6.9
    assert found["slope minus kernel (us)"] == pytest.approx(0.59)
    assert found["eager gap, slope minus kernel (us)"] == pytest.approx(6.23)
    assert found["eager gap / graph gap"] == pytest.approx(6.23 / 0.256)
    c19 = claims.get("C19").judge(dict(triton_gbps=3000.0, torch_gbps=1500.0, copy_ceiling_gbps=4000.0,
                                       speedup_iqr=[1.9, 2.1], elements=2**26))
    assert reproduce.deciding_ratios(c19) == {"Triton / PyTorch": 2.0}
    assert set(reproduce.CLAIM_IDS) == {"C18", "C19"}
