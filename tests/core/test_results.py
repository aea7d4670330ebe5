"""Results: local runs go to the cache dir, reference runs to results/<machine>.json."""

import json
import math

import numpy as np
import pytest
import torch

from labkit.core import env, results
from labkit.measure import timing as timing_stats


@pytest.fixture(autouse=True)
def private_dirs(tmp_path, monkeypatch, private_cache):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))


def test_local_record_goes_to_the_cache_not_the_repository(tmp_path):
    path = results.record("00_setup_check", "copy", {"gbps": 12.5})
    assert path == tmp_path / "cache" / f"results-{env.device_key()}.json"
    assert not (tmp_path / "results").exists()
    assert results.mine("00_setup_check", "copy") == {"gbps": 12.5}
    assert results.recorded("00_setup_check", "copy") is None


def test_reference_record_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_RECORD_REFERENCE", "test-gpu")
    path = results.record("02_contiguity", "C2", {"verdict": "refuted"})
    results.record("02_contiguity", "C6", {"verdict": "confirmed"})
    assert path == tmp_path / "results" / "test-gpu.json"
    data = json.loads(path.read_text())
    assert data["machine"] == "test-gpu"
    assert data["fingerprint"]["torch"] == torch.__version__
    assert set(data["chapters"]["02_contiguity"]) == {"C2", "C6"}
    assert results.recorded("02_contiguity", "C2", machine="test-gpu") == {"verdict": "refuted"}
    assert results.reference_machines() == ["test-gpu"]
    assert "test-gpu" in results.describe_machine("test-gpu")


def test_same_key_is_replaced():
    results.record("c", "k", 1)
    results.record("c", "k", 2)
    assert results.mine("c", "k") == 2


def test_bad_names():
    with pytest.raises(ValueError, match="machine name"):
        results.reference_path("../etc/passwd")
    with pytest.raises(ValueError, match="chapter"):
        results.record("", "k", 1)


def test_missing_reference_is_said_plainly():
    assert results.recorded("00_setup_check", "anything", machine="nowhere") is None
    assert "no reference recorded" in results.describe_machine("nowhere")


def test_corrupt_file_is_a_clear_error(tmp_path):
    path = results.local_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{oops")
    with pytest.raises(ValueError, match="not valid JSON"):
        results.record("c", "k", 1)


def test_payloads_become_plain_json():
    s = timing_stats.summarise([1.0, 2.0, 3.0])
    timing = timing_stats.Timing("t", "cpu", "hot", (1.0, 2.0, 3.0), s.median_s, s.iqr_s,
                                  s.min_s, s.count)
    value = results.to_jsonable({"np": np.float32(1.5), "arr": np.arange(3), "t": torch.tensor(2),
                                 "tuple": (1, 2), "nan": math.nan, "timing": timing, 3: None})
    assert value["np"] == 1.5 and value["arr"] == [0, 1, 2] and value["t"] == 2
    assert value["tuple"] == [1, 2] and value["nan"] == "nan" and value["3"] is None
    assert value["timing"]["median_s"] == 2.0
    json.dumps(value)


def test_against_reference_table(monkeypatch):
    monkeypatch.setenv("LABKIT_RECORD_REFERENCE", "ref-box")
    results.record("00", "ceilings", {"copy_gbps": 4200.0, "matmul": {"bf16": 780.0}})
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE")
    table = results.against_reference("00", "ceilings", {"copy_gbps": 15.0}, machine="ref-box")
    assert [r[0] for r in table.rows] == ["copy_gbps", "matmul.bf16"]
    page = table._repr_html_()
    assert "ref-box (recorded)" in page and "4200" in page and "15" in page and "-" in page
