"""Where plugins pin their host framework, read from text the way CI and build files hold it."""

from __future__ import annotations

from repoherald.analysis.facts.hostpins import host_names_for, pin_values

WORKFLOW = """jobs:
  test:
    strategy:
      matrix:
        vllm_version: [83f478bb19489b41e9d208b47b4bb5a95ac171ac, v0.11.0]
        os: [linux-aarch64-a2]
    steps:
      - uses: actions/checkout@v4
        with:
          repository: vllm-project/vllm
          path: ./vllm-empty
          ref: v0.11.0
      - uses: actions/checkout@v4
        with:
          repository: other/tool
          ref: v9.9.9
"""


def test_host_names_come_from_a_plugins_name() -> None:
    assert host_names_for("vllm-project/vllm-gaudi") == {"vllm"}
    assert host_names_for("sgl-project/sglang-kernels") == {"sglang"}
    assert host_names_for("torch_npu") == {"torch"}
    assert host_names_for("vllm-project/vllm") == frozenset(), "a host is not its own plugin"
    assert host_names_for("fla-org/flash-linear-attention") == frozenset()
    assert host_names_for("vllm-project/tpu-inference") == frozenset(), "hardware, not a package"
    assert host_names_for("ai/ml-lib") == frozenset(), "too short to name a package"


def test_every_way_a_workflow_or_image_pins_the_host() -> None:
    found = pin_values("vllm", WORKFLOW)
    assert found == {"83f478bb19489b41e9d208b47b4bb5a95ac171ac": 1, "v0.11.0": 2}
    image = "ARG VLLM_TAG=v0.10.2\nRUN pip install vllm==0.9.1 && echo $VLLM_TAG\n"
    assert pin_values("vllm", image) == {"v0.10.2": 1, "0.9.1": 1}


def test_values_that_are_no_versions_are_not_pins() -> None:
    text = "VLLM_TARGET_DEVICE=tpu\nVLLM_COMMIT=${{ inputs.commit }}\nvllm_ref: main-branch\n"
    assert pin_values("vllm", text) == {}
    assert pin_values("vllm", "nothing here") == {}


def test_an_install_script_pins_the_host() -> None:
    from repoherald.analysis.facts.commit import file_kind
    from repoherald.analysis.facts.hostpins import file_bumps
    from repoherald.models import FileChange, FileStatus

    texts = {"a": 'VLLM_VERSION="0.27.0"\npip install vllm\n', "b": 'VLLM_VERSION="0.27.1"\n'}
    change = FileChange("install.sh", FileStatus.MODIFIED, None, 1, 1, old_blob="a", new_blob="b")
    (bump,) = file_bumps(frozenset({"vllm"}), [change], file_kind, texts.get)
    assert (bump.name, bump.path, bump.old, bump.new) == ("vllm", "install.sh", "0.27.0", "0.27.1")
