"""Write tests/reference/safetensors_from_torch.safetensors with the safetensors library's
own writer (safetensors.torch.save_file), one tensor of each dtype agrad reads, and
safetensors_from_torch.json with their values, for tests/engine/test_serialization.py.
Run with the torch venv plus `pip install safetensors`:

    /tmp/torchvenv/bin/python tests/reference/make_serialization_reference.py
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import safetensors
import torch
from safetensors.torch import save_file

HERE = Path(__file__).resolve().parent


def main() -> None:
    g = torch.Generator().manual_seed(0)
    tensors = {
        "f32": torch.randn(2, 3, generator=g),
        "f64": torch.randn(4, dtype=torch.float64, generator=g),
        "f16": torch.randn(3, 2, generator=g).half(),
        "bf16": torch.randn(5, generator=g).bfloat16(),
        "i64": torch.arange(-3, 3).reshape(2, 3),
        "i32": torch.tensor([1, -2, 3], dtype=torch.int32),
        "i16": torch.tensor([[7, -8]], dtype=torch.int16),
        "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 255, 3], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 4),
    }
    path = HERE / "safetensors_from_torch.safetensors"
    save_file(tensors, str(path), metadata={"format": "pt"})
    values = {name: {"dtype": str(t.dtype).rsplit(".", 1)[-1], "shape": list(t.shape),
                     "values": (t.float() if t.dtype == torch.bfloat16 else t).tolist()}
              for name, t in tensors.items()}
    out = HERE / "safetensors_from_torch.json"
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"torch_version": torch.__version__, "safetensors_version": safetensors.__version__,
                               "tensors": values}, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, out)
    print(f"wrote {path} and {out}")


if __name__ == "__main__":
    main()
