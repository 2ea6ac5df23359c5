"""Record what PyTorch does in the scenarios of fft_scenarios.py (torch.fft, stft, istft).

    /work/torchvenv/bin/python tests/reference/make_fft_reference.py

writes fft_scenarios.json beside it (deterministic); tests/engine/test_fft.py runs the same
scenarios with agrad and compares, without torch.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fft_scenarios  # noqa: E402
from scenario_recording import write_fixture  # noqa: E402

OUT = HERE / "fft_scenarios.json"


def main() -> None:
    torch.set_default_dtype(torch.float32)
    recorded = {"torch_version": torch.__version__, "scenarios": {}}
    for label, fn in fft_scenarios.SCENARIOS.items():
        torch.set_grad_enabled(True)
        recorded["scenarios"][label] = json.loads(json.dumps(fn(torch)))      # tuples -> lists
    write_fixture(OUT, recorded)
    print(f"torch {torch.__version__}: {len(recorded['scenarios'])} scenarios written to {OUT}")


if __name__ == "__main__":
    main()
