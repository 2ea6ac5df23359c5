"""The shipped examples: valid against the JSON Schema, clean to validate, and their `expect:` passes."""
import json

import jsonschema
import pytest
import yaml

from agrad import dispatcher, graphs
from graph_helpers import EXAMPLES

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))


def test_schema_is_draft7_and_json():
    schema = graphs.json_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    assert json.loads(json.dumps(schema)) == schema
    assert schema["additionalProperties"] is False


def test_schema_op_names_come_from_the_registry():
    schema = graphs.json_schema()
    ops = schema["properties"]["nodes"]["additionalProperties"]["anyOf"][1]["properties"]["op"]["anyOf"][0]["enum"]
    assert ops == sorted(e.name for e in dispatcher.all_ops() if "::" not in e.name)


def test_schema_accepts_plugin_op_names_and_rejects_unknown_ops():
    schema = graphs.json_schema()
    node = "nodes:\n  y: {{op: {op}, args: [x]}}\ninputs: {{x: 1.0}}\n"
    jsonschema.validate(yaml.safe_load(node.format(op='"myops::scale"')), schema)
    for bad in ('"relux"', '"myops::"', '"a::b::c"', '"my ops::scale"'):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(node.format(op=bad)), schema)


def test_there_are_examples():
    assert {"seed.yaml", "mlp.yaml", "diamond.yaml", "two_pass.yaml", "classifier.yaml",
            "hessian_vector.yaml"} <= {p.name for p in EXAMPLE_FILES}


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_matches_the_schema(path):
    jsonschema.validate(yaml.safe_load(path.read_text()), graphs.json_schema())


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_expectations_pass(path):
    # Training is tested in test_train_examples.py; here only what a plain run checks.
    outcome = graphs.test_file(path, train=False)
    assert not (outcome.diagnostics or outcome.failures or outcome.error), (outcome.diagnostics, outcome.failures)
    assert outcome.passed or outcome.unchecked == ["train"]


# The training examples' parameters have thousands of elements, each two forward passes in a full
# check (45 s of the suite's time between the two): they are checked as `check --fast` does (random
# projections of the Jacobian against one finite difference each, PyTorch's fast_mode), which a wrong
# gradient fails too; their ops' every column is gradchecked in the op tests.
FAST_CHECKED = {"train_gpt_chars.yaml", "train_digits.yaml"}


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_gradients_check(path):
    result = graphs.load(path).check(fast=path.name in FAST_CHECKED)
    assert result.passed, result.leaves


@pytest.mark.parametrize("text", [
    "nodes: {}\nbogus: 1\n",
    "nodes: {a: 1}\n",
    "dtype: float8\nnodes: {}\n",
    "inputs: {x: {value: 1, reqires_grad: true}}\nnodes: {}\n",
    "nodes: {}\nbackward: {grad_tensors: [1]}\n",
])
def test_schema_rejects_what_validation_rejects(text):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(text), graphs.json_schema())


def test_the_seed_example_is_the_specs():
    spec = (EXAMPLES.parents[2] / "shared" / "SPEC.md")
    text = (EXAMPLES / "seed.yaml").read_text()
    if spec.exists():
        block = spec.read_text().split("```yaml\n", 1)[1].split("```", 1)[0]
        assert text == block
