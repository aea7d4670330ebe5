"""C26's experiment: follow the seed's advice in a real Dataset, and put channels_last where it works.

The seed (000, section 4.2) advises CNN pipelines to "return
`tensor.contiguous(memory_format=torch.channels_last)` from `Dataset.__getitem__`". A
Dataset returns one sample, [C, H, W]: three dimensions. channels_last is a layout of
four ([N, C, H, W] with C fastest), so torch refuses it for a 3-D tensor. This module runs
the advice through a real DataLoader and records what happens, then tries the two places
the layout can go instead: on the 4-D batch after collation, and (the workaround of
returning [1, C, H, W] samples) what the default collate makes of those.

    from labkit.chapters.ch05_dataloader import channels_last_probe
    evidence = channels_last_probe.probe()   # plain values, for claims.get("C26").judge
"""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset


class AdvisedImages(Dataset):
    """Small random images; `layout` says what __getitem__ returns.

    'advised': the seed's line, sample.contiguous(memory_format=torch.channels_last) on the
    [C, H, W] sample; 'plain': the sample as it is; 'unsqueezed': [1, C, H, W] in channels_last
    (the obvious workaround, to see what collation does with it).
    """

    LAYOUTS = ("advised", "plain", "unsqueezed")

    def __init__(self, layout: str, length: int = 8, side: int = 16) -> None:
        if layout not in self.LAYOUTS:
            raise ValueError(f"layout is one of {self.LAYOUTS}, got {layout!r}")
        self.layout, self.length, self.side = layout, length, side

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        sample = torch.rand(3, self.side, self.side, generator=torch.Generator().manual_seed(index))
        if self.layout == "advised":
            sample = sample.contiguous(memory_format=torch.channels_last)
        elif self.layout == "unsqueezed":
            sample = sample.unsqueeze(0).contiguous(memory_format=torch.channels_last)
        return sample, index % 2


def _first_batch(layout: str, batch_size: int = 4) -> tuple[torch.Tensor | None, str, str]:
    """The first batch's images, or None with the exception's type and first line."""
    try:
        images, _ = next(iter(DataLoader(AdvisedImages(layout), batch_size=batch_size)))
    except Exception as error:  # noqa: BLE001 -- the point is to record whatever torch raises
        return None, type(error).__name__, str(error).strip().splitlines()[0][:200]
    return images, "", ""


def probe() -> dict:
    """What the seed's advice does in a DataLoader, and where channels_last works instead."""
    advised, error_type, error_message = _first_batch("advised")
    plain, _, _ = _first_batch("plain")
    unsqueezed, _, _ = _first_batch("unsqueezed")
    if plain is None or unsqueezed is None:
        raise RuntimeError("the plain and unsqueezed datasets should always load; torch changed?")
    converted = plain.contiguous(memory_format=torch.channels_last)
    return {
        "getitem_raises": advised is None,
        "error_type": error_type,
        "error_message": error_message,
        "advised_batch_channels_last": (bool(advised.is_contiguous(memory_format=torch.channels_last))
                                        if advised is not None and advised.dim() == 4 else False),
        "sample_dim": 3,
        "plain_batch_shape": list(plain.shape),
        "plain_batch_stride": list(plain.stride()),
        "batch_converted_channels_last": bool(converted.is_contiguous(memory_format=torch.channels_last)),
        "batch_converted_stride": list(converted.stride()),
        "unsqueezed_batch_shape": list(unsqueezed.shape),
        "unsqueezed_batch_channels_last": bool(unsqueezed.dim() == 4 and unsqueezed.is_contiguous(
            memory_format=torch.channels_last)),
        "torch": torch.__version__,
    }
