"""torch.nn.ChannelShuffle (torch/nn/modules/channelshuffle.py): F.channel_shuffle with its
groups."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
