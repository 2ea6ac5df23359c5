"""`agrad ops NAME` shows the op's derivative formulas; `agrad ops --formulas` lists every op's,
one line per input (the survey PyTorch's derivatives.yaml gives); both also as JSON."""
import json
import re

from agrad.cli.main import cli


def test_ops_name_shows_its_formulas(runner):
    result = runner.invoke(cli, ["ops", "tanh"])
    assert result.exit_code == 0
    assert re.search(r"^derivatives +self: tanh_backward\(grad, result\)", result.stdout, re.M)
    mul = runner.invoke(cli, ["ops", "mul"]).stdout
    assert re.search(r"^derivatives +self: grad \* other\.conj\(\)\s*\n +other: grad \* self\.conj\(\)", mul, re.M)
    assert re.search(r"^derivatives +composite \(gradients from the ops it calls\)",
                     runner.invoke(cli, ["ops", "matmul"]).stdout, re.M)


def test_formulas_lists_one_line_per_input(runner):
    result = runner.invoke(cli, ["ops", "--formulas"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert re.search(r"^add +self: grad$", result.stdout, re.M)
    assert re.search(r"^add +other: grad if alpha == 1 else grad \* alpha\.conj\(\)$", result.stdout, re.M)
    assert re.search(r"^tanh +self: tanh_backward\(grad, result\)$", result.stdout, re.M)
    assert re.search(r"^eq +not differentiable$", result.stdout, re.M)
    assert re.search(r"^matmul +composite \(gradients from the ops it calls\)$", result.stdout, re.M)
    public = json.loads(runner.invoke(cli, ["ops", "--format", "json"]).stdout)["ops"]
    assert sorted({line.split()[0] for line in lines}) == sorted(op["name"] for op in public)   # never wrapped
    every = runner.invoke(cli, ["ops", "--formulas", "--all"]).stdout
    assert re.search(r"^tanh_backward +grad_output: ", every, re.M) and len(every.splitlines()) > len(lines)


def test_formulas_as_json(runner):
    document = json.loads(runner.invoke(cli, ["ops", "--formulas", "--format", "json"]).stdout)
    assert document["schema_version"] == 1
    by_op = {entry["op"]: entry for entry in document["formulas"]}
    assert all(set(entry) == {"op", "kind", "inputs", "summary"} for entry in document["formulas"])
    assert by_op["mul"] == {"op": "mul", "kind": "formulas",
                            "inputs": {"self": "grad * other.conj()", "other": "grad * self.conj()"}, "summary": ""}
    assert by_op["matmul"]["kind"] == "composite" and by_op["matmul"]["inputs"] == {}
    one = json.loads(runner.invoke(cli, ["ops", "tanh", "--format", "json"]).stdout)["ops"][0]
    assert one["derivatives"] == {"kind": "formulas", "inputs": {"self": "tanh_backward(grad, result)"}, "summary": ""}
    assert "derivatives" not in json.loads(runner.invoke(cli, ["ops", "--format", "json"]).stdout)["ops"][0]
