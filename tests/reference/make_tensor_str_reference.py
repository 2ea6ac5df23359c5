"""Record PyTorch's repr of the tensors of tests/reference/tensor_str_cases.py, for a test that never imports torch.

    /work/torchvenv/bin/python tests/reference/make_tensor_str_reference.py

Builds each case's values with NumPy (tensor_str_cases.build_array), hands them to torch
(requires_grad, the method that gives a grad_fn, the meta device, nn.Parameter, print options
set for that case only) and writes tests/reference/engine/tensor_str.json: the torch version,
then per case its spec and `repr(t)`. tests/engine/test_tensor_str.py builds the same tensors
in agrad and compares. Deterministic: running it twice writes the same bytes.
"""
from __future__ import annotations

import json
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tensor_str_cases import CASES, build_array  # noqa: E402


def build(spec: dict) -> torch.Tensor:
    arr = build_array(spec)
    if spec.get("device") == "meta":
        t = torch.empty(arr.shape, dtype=getattr(torch, str(arr.dtype)), device="meta")
    else:
        t = torch.from_numpy(arr.copy())
    if spec.get("requires_grad"):
        t.requires_grad_(True)
    if spec.get("parameter"):
        t = torch.nn.Parameter(t)
    if "method" in spec:
        name, *args = spec["method"]
        t = getattr(t, name)(*args)
    return t


def main() -> int:
    cases = {}
    for name, spec in CASES.items():
        t = build(spec)
        torch.set_printoptions(**spec.get("printoptions", {}))
        try:
            text = repr(t)
        finally:
            torch.set_printoptions(profile="default")
        cases[name] = {"spec": spec, "repr": text}
    out = HERE / "engine" / "tensor_str.json"
    out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}, indent=1) + "\n")
    print(f"wrote {out.relative_to(HERE.parent.parent)}: {len(cases)} cases, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
