"""Record what PyTorch 2.13 does with forward-mode AD in the scenarios of forward_ad_scenarios.py, for
tests/engine/test_forward_ad.py (which never imports torch and runs the same scenarios on agrad).

    /work/torchvenv/bin/python tests/reference/make_forward_ad.py

Writes tests/reference/forward_ad_scenarios.json. Deterministic: the inputs are fixed numbers.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.autograd.forward_ad as fwAD

sys.path.insert(0, str(Path(__file__).resolve().parent))
import forward_ad_scenarios  # noqa: E402


def main() -> None:
    out = {"torch": torch.__version__,
           **{name: fn(torch, fwAD) for name, fn in forward_ad_scenarios.SCENARIOS.items()}}
    path = Path(__file__).parent / "forward_ad_scenarios.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
