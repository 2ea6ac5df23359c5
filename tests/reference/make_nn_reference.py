"""Write tests/reference/nn_fixtures.json: torch.nn's module structures (state_dict keys,
shapes, dtypes, names, reprs), forward values and running statistics, loss values,
initialisation distributions, load_state_dict's messages and a short training run, for
every scenario in tests/engine/nn_scenarios.py. Run with the torch venv
(tests/reference/README.md):

    /tmp/torchvenv/bin/python tests/reference/make_nn_reference.py
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import torch
from torch.nn import init

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
from scenario_recording import write_fixture  # noqa: E402 - beside this script
import nn_scenarios as S  # noqa: E402


def _distribution(name: str) -> dict:
    """The distribution torch's own formulas give each INITS entry (its fans and gains)."""
    how, what = S.INITS[name]
    if callable(how):
        module = how(torch)
        if isinstance(module, torch.nn.Embedding):
            return {"kind": "normal", "mean": 0.0, "std": 1.0}
        fan_in, _ = init._calculate_fan_in_and_fan_out(module.weight)
        if what == "weight":      # kaiming_uniform_(a=√5)
            bound = math.sqrt(3.0) * init.calculate_gain("leaky_relu", math.sqrt(5)) / math.sqrt(fan_in)
        else:
            bound = 1 / math.sqrt(fan_in)
        return {"kind": "uniform", "low": -bound, "high": bound}
    t = torch.empty(S.INIT_SHAPE)
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(t)
    kw = dict(what)
    if how == "xavier_uniform_":
        a = math.sqrt(3.0) * init.calculate_gain(kw["gain"]) * math.sqrt(2.0 / (fan_in + fan_out))
        return {"kind": "uniform", "low": -a, "high": a}
    if how == "xavier_normal_":
        return {"kind": "normal", "mean": 0.0, "std": math.sqrt(2.0 / (fan_in + fan_out))}
    if how == "kaiming_uniform_":
        fan = fan_out if kw.get("mode") == "fan_out" else fan_in
        bound = math.sqrt(3.0) * init.calculate_gain(kw["nonlinearity"]) / math.sqrt(fan)
        return {"kind": "uniform", "low": -bound, "high": bound}
    if how == "kaiming_normal_":
        return {"kind": "normal", "mean": 0.0, "std": init.calculate_gain("leaky_relu", kw["a"]) / math.sqrt(fan_in)}
    if how == "trunc_normal_":
        return {"kind": "truncated_normal", "mean": 0.0, "std": kw["std"], "low": kw["a"], "high": kw["b"]}
    if how == "normal_":
        return {"kind": "normal", "mean": kw["mean"], "std": kw["std"]}
    return {"kind": "uniform", "low": kw["a"], "high": kw["b"]}


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    out = {"torch_version": torch.__version__,
           "structures": {name: S.structure(torch, name) for name in S.STRUCTURES},
           "forwards": {name: S.forward(torch, name, None) for name in S.FORWARDS},
           "losses": S.losses(torch),
           "inits": {name: {"torch": S.init_stats(S.init_sample(torch, name).ravel()),
                            "distribution": _distribution(name)} for name in S.INITS},
           "gains_and_fans": S.gains_and_fans(torch),
           "load_errors": {name: S.load_error(torch, name) for name in S.LOAD_ERRORS},
           "train": S.train(torch, None)}
    path = HERE / "nn_fixtures.json"
    write_fixture(path, out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
