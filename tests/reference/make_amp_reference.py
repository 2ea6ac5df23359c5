"""Record what PyTorch does in the scenarios of amp_scenarios.py, and which ATen ops its autocast keys serve.

    /work/torchvenv/bin/python tests/reference/make_amp_reference.py

writes amp_scenarios.json beside it (deterministic): each scenario's answer, and under "autocast_ops" the ATen ops
(with overload) that have a kernel for AutocastCPU and for AutocastCUDA in this torch's dispatcher, which
tests/engine/test_autocast.py compares with agrad's lists (agrad/amp/cast_policies.py). The tests never import torch.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import amp_scenarios  # noqa: E402

OUT = Path(__file__).resolve().parent / "amp_scenarios.json"


def _autocast_ops(key: str) -> list[str]:
    return sorted(name[len("aten::"):] for name in torch._C._dispatch_get_all_op_names()
                  if name.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(name, key))


def main() -> None:
    torch.set_default_dtype(torch.float32)
    recorded = {"torch_version": torch.__version__, "scenarios": {},
                "autocast_ops": {"cpu": _autocast_ops("AutocastCPU"), "cuda": _autocast_ops("AutocastCUDA")}}
    for label, fn in amp_scenarios.SCENARIOS.items():
        recorded["scenarios"][label] = json.loads(json.dumps(fn(torch)))      # tuples -> lists
    OUT.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"torch {torch.__version__}: {len(recorded['scenarios'])} scenarios written to {OUT}")


if __name__ == "__main__":
    main()
