"""Reading the operators a native extension registers, and which changes break callers."""

from __future__ import annotations

from repoherald.analysis.facts.opschema import breaks_callers, registered_ops, schema_arguments

BINDINGS = b"""
#include <torch/library.h>
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  // Apply grouped topk routing to select experts.
  ops.def(
      "grouped_topk(Tensor scores, Tensor scores_with_bias, int n_group, int "
      "topk_group, bool renormalize) -> (Tensor, Tensor)");
  ops.impl("grouped_topk", torch::kXPU, &grouped_topk);
  ops.def("rms_norm(Tensor! out, Tensor input, float epsilon=1e-6) -> ()");
  m.def("my_ops::silu_and_mul(Tensor! out, Tensor x) -> ()");
}
PYBIND11_MODULE(flash_attn_2_cuda, m) {
  m.def("fwd", &mha_fwd, "Forward pass");
  py::class_<Handle>(m, "Handle").def("reset", &Handle::reset);
}
"""


def test_schemas_are_read_across_adjacent_literals_and_names_without_one() -> None:
    assert registered_ops(BINDINGS) == {
        "grouped_topk": "grouped_topk(Tensor scores, Tensor scores_with_bias, int n_group, int "
        "topk_group, bool renormalize) -> (Tensor, Tensor)",
        "rms_norm": "rms_norm(Tensor! out, Tensor input, float epsilon=1e-6) -> ()",
        "silu_and_mul": "my_ops::silu_and_mul(Tensor! out, Tensor x) -> ()",
        "fwd": "",
        "reset": "",
    }


def test_a_file_without_definitions_costs_no_scan() -> None:
    assert registered_ops(b"__global__ void k(float* x) { x[0] = 1; }") == {}


def test_arguments_keep_bracketed_types_and_defaults() -> None:
    schema = "f(int[2] size, (Tensor, Tensor) pair, *, Tensor? bias=None, str mode='a,b') -> ()"
    assert schema_arguments(schema) == {"size": False, "pair": False, "bias": True, "mode": True}
    assert schema_arguments("f(Tensor") is None


def test_what_breaks_a_caller() -> None:
    old = "topk(Tensor w, Tensor ids, Tensor gating) -> ()"
    assert breaks_callers(old, "topk(Tensor w, Tensor ids, Tensor gating, Tensor is_padding) -> ()")
    assert breaks_callers(old, "topk(Tensor w, Tensor ids) -> ()")
    assert breaks_callers(old, "topk(Tensor w, Tensor ids, Tensor logits) -> ()")  # renamed
    assert not breaks_callers(
        old, "topk(Tensor w, Tensor ids, Tensor gating, bool pad=False) -> ()"
    )
    assert not breaks_callers(old, "topk(Tensor! w, Tensor ids, Tensor gating) -> Tensor")
    assert not breaks_callers(old, "topk(Tensor w, Tensor")  # unreadable: no verdict
