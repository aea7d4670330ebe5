"""The synthetic image dataset: real bytes, deterministic samples, picklable, clear refusals."""

import pickle

import pytest
import torch
from torch.utils.data import DataLoader

from labkit.chapters.ch05_dataloader import loader_data


@pytest.fixture(scope="module")
def small():
    return loader_data.SyntheticImages(length=40, unique=4, encoded_side=48, output_side=32)


def test_encoded_images_are_real_jpeg_and_png():
    jpeg = loader_data.SyntheticImages(length=2, unique=2, encoded_side=32, output_side=16)
    png = loader_data.SyntheticImages(length=2, unique=2, encoded_side=32, output_side=16, fmt="PNG")
    assert jpeg.encoded[0][:3] == b"\xff\xd8\xff"
    assert png.encoded[0][:8] == b"\x89PNG\r\n\x1a\n"


def test_sample_shape_dtype_and_normalisation(small):
    image, label = small[5]
    assert image.shape == (3, 32, 32) and image.dtype == torch.float32 and image.is_contiguous()
    assert label == 5 % small.classes
    assert -3 < float(image.min()) and float(image.max()) < 3  # ImageNet-normalised range
    assert small.sample_bytes == 3 * 32 * 32 * 4


def test_uint8_samples_are_four_times_smaller_and_normalise_to_the_same():
    as_float = loader_data.SyntheticImages(length=8, unique=2, encoded_side=48, output_side=32)
    as_bytes = loader_data.SyntheticImages(length=8, unique=2, encoded_side=48, output_side=32,
                                           as_uint8=True)
    raw, _ = as_bytes[3]
    assert raw.dtype == torch.uint8 and as_bytes.sample_bytes * 4 == as_float.sample_bytes
    torch.testing.assert_close(loader_data.normalise_on_device(raw[None])[0], as_float[3][0],
                               atol=1e-5, rtol=1e-5)


def test_samples_are_deterministic_and_differ_by_index(small):
    assert torch.equal(small[7][0], small[7][0])
    assert not torch.equal(small[0][0], small[4][0])  # same encoded image, different crop


def test_pickles_and_loads_the_same_through_workers(small):
    again = pickle.loads(pickle.dumps(small))
    assert torch.equal(again[3][0], small[3][0])
    in_process = torch.cat([b[0] for b in DataLoader(small, batch_size=8)])
    with_workers = torch.cat([b[0] for b in DataLoader(small, batch_size=8, num_workers=2,
                                                        timeout=60)])
    assert torch.equal(in_process, with_workers)


def test_extra_passes_cost_more():
    cheap = loader_data.SyntheticImages(length=64, unique=4, encoded_side=96, output_side=64)
    dear = loader_data.SyntheticImages(length=64, unique=4, encoded_side=96, output_side=64,
                                       extra_passes=4)
    assert loader_data.per_sample_cost(dear, 100).median_s > loader_data.per_sample_cost(cheap, 100).median_s


@pytest.mark.parametrize("kwargs, words", [
    (dict(length=0), "length"),
    (dict(encoded_side=4), "encoded_side"),
    (dict(output_side=5000), "at most"),
    (dict(fmt="GIF"), "fmt"),
    (dict(extra_passes=-1), "extra_passes"),
])
def test_bad_arguments_are_refused_clearly(kwargs, words):
    with pytest.raises(ValueError, match=words):
        loader_data.SyntheticImages(**kwargs)


def test_index_out_of_range_is_an_index_error(small):
    with pytest.raises(IndexError, match="outside"):
        small[len(small)]
