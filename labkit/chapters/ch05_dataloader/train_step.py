"""The consumer of chapter 05's loader: one training step, and a device prefetcher.

A DataLoader is tuned against what consumes it: a step that computes for 100 ms needs a
batch every 100 ms. `TrainingStep` is that consumer (copy to the device, forward, loss,
backward, SGD update; synchronised at the end on a GPU, so its time is its own), and
`DevicePrefetcher` copies the next batch to the GPU on a side stream while a step computes.

    from labkit.chapters.ch05_dataloader import train_step
    step = train_step.consumer("small_cnn")      # or "resnet50" on a GPU
    step((images, labels), non_blocking=False)   # returns the loss
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from labkit.chapters.ch05_dataloader import loader_data


def small_cnn(classes: int = 10) -> nn.Module:
    """A CNN small enough for one CPU core: three strided convolutions, pooling, a classifier."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes))


class TrainingStep:
    """One SGD step on a batch: copy it to the device, forward, loss, backward, update.

    channels_last and a bfloat16 autocast are the usual settings of a tuned GPU step; on a
    GPU the step ends with a synchronize so its time is all in its own 'compute'.
    """

    def __init__(self, model: nn.Module, device: str | torch.device = "cpu",
                 channels_last: bool = False, autocast_dtype: torch.dtype | None = None) -> None:
        self.device = torch.device(device)
        self.channels_last = channels_last
        self.autocast_dtype = autocast_dtype
        self.model = model.to(self.device)
        if channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.optimiser = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)

    def __call__(self, batch: Sequence[torch.Tensor], non_blocking: bool = False) -> float:
        images, labels = batch
        images = images.to(self.device, non_blocking=non_blocking)
        labels = labels.to(self.device, non_blocking=non_blocking)
        if images.dtype == torch.uint8:
            images = loader_data.normalise_on_device(images)
        if self.channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        with torch.autocast(self.device.type, dtype=self.autocast_dtype,
                            enabled=self.autocast_dtype is not None):
            loss = F.cross_entropy(self.model(images), labels)
        self.optimiser.zero_grad(set_to_none=True)
        loss.backward()
        self.optimiser.step()
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return float(loss.detach())


class DevicePrefetcher:
    """Copy batch i+1 to the GPU on a side stream while step i computes.

    Why: `non_blocking=True` only frees the CPU; on one stream the GPU still runs the copy
    and then the step's kernels one after the other. A second stream lets the copy engine
    work while the SMs compute (the copy must come from pinned memory to be asynchronous).
    The step's stream waits for the copy's event before it uses the batch, and the batch's
    memory is marked as used by that stream so the caching allocator does not reuse it early.
    """

    def __init__(self, iterator: object, device: torch.device) -> None:
        self.iterator, self.device = iterator, device
        self.stream = torch.cuda.Stream(device)
        self.pending: tuple | None = None
        self._load()

    def _load(self) -> None:
        try:
            images, labels = next(self.iterator)  # type: ignore[call-overload]
        except StopIteration:
            self.pending = None
            return
        with torch.cuda.stream(self.stream):
            images = images.to(self.device, non_blocking=True)
            labels = labels.to(self.device, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record(self.stream)
        self.pending = (images, labels, ready)

    def __iter__(self) -> DevicePrefetcher:
        return self

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.pending is None:
            raise StopIteration
        images, labels, ready = self.pending
        current = torch.cuda.current_stream(self.device)
        current.wait_event(ready)
        images.record_stream(current)
        labels.record_stream(current)
        self._load()  # queue the next copy now, so it runs while this batch is computed on
        return images, labels


def consumer(model: str) -> TrainingStep:
    """The chapter's training step: a small CNN on one CPU core, or ResNet-50 on the GPU
    (channels_last, bfloat16 autocast: a tuned step, so the loader has to keep up). bfloat16
    needs compute capability 8.0 (Ampere) or newer; an older GPU (a Colab T4 is 7.5) gets
    float16 autocast, the tuned setting it has (this step times the loader; without a
    GradScaler its gradients may underflow, which the timing does not read)."""
    if model not in ("small_cnn", "resnet50"):
        raise ValueError(f"model is 'small_cnn' or 'resnet50', got {model!r}")
    if model == "resnet50":
        from labkit.models import resnet

        if not torch.cuda.is_available():
            raise RuntimeError("the resnet50 consumer runs on a CUDA GPU; none is visible here")
        bf16 = torch.cuda.get_device_capability() >= (8, 0)
        return TrainingStep(resnet.resnet50(num_classes=10), "cuda", channels_last=True,
                            autocast_dtype=torch.bfloat16 if bf16 else torch.float16)
    return TrainingStep(small_cnn(), "cpu")
