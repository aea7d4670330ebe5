"""Where channels_last stops: the first module whose output is not channels_last.

A 1x1 map (avgpool's output) is channels_last *and* NCHW at once (`memory_format_of` says
'both'): its strides satisfy both formats, so it has not dropped channels_last. The first
module whose output is not channels_last is the first whose format is neither
'channels_last' nor 'both': in ResNet-50, `fc` (a 2-D output, no channel dim left to order).
"""

from __future__ import annotations

from collections.abc import Sequence

from labkit.models.resnet import LayerLayout

STILL_CHANNELS_LAST = ("channels_last", "both")  # 'both': a 1x1 map satisfies either format

QUIZ_CHOICES = ("conv1 (the stem)", "a residual add (Bottleneck output)", "avgpool", "fc")


def first_not_channels_last(records: Sequence[LayerLayout]) -> LayerLayout:
    """The first traced module whose output is not channels_last ('both' counts as kept)."""
    for record in records:
        if record.output_format not in STILL_CHANNELS_LAST:
            return record
    raise ValueError("every traced module's output is channels_last; nothing dropped it")


def quiz_choice(record: LayerLayout) -> str:
    """The propagation quiz's choice naming this module (a Bottleneck's output is its add)."""
    named = {"conv1": QUIZ_CHOICES[0], "avgpool": QUIZ_CHOICES[2], "fc": QUIZ_CHOICES[3]}
    return named.get(record.name, QUIZ_CHOICES[1])
