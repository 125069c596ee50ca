"""No file of any strategy's checkpoint executes code on resume.

Each case trains one epoch on 2 gloo ranks, then resumes from copies of the
checkpoint with a payload planted in one file: as planted (the manifest's
SHA-256 catches it) and with a forged manifest (the loader refuses what it
would have to execute). The payload would create a marker file; none may exist.
"""

from __future__ import annotations

import os
import sys

import pytest

from cadence.dist.testing import run_distributed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import payload_cases  # noqa: E402

REFUSED = "nothing in it was executed"  # the loader refused it
CAUGHT = "the manifest says"  # the size or SHA-256 differs from the manifest


def check(work, outcomes, expected):
    assert outcomes.pop("pristine") == "loaded"  # the safe readers load a sound checkpoint
    for name, message in outcomes.items():
        assert message != "loaded", name
        assert not os.path.exists(os.path.join(work, f"pwned_{name}")), name
        assert expected[name] in message, (name, message)
    assert not [f for f in os.listdir(work) if f.startswith("pwned_")]


@pytest.mark.dist
def test_ddp_checkpoint_refuses_a_planted_payload(tmp_path):
    work = str(tmp_path)
    plants = [("main", "epoch_1.pth", False), ("main_forged", "epoch_1.pth", True)]
    outcomes = run_distributed(
        payload_cases.refuse_payloads, work, dict(type="DDPStrategy"), plants, timeout=120
    )
    assert outcomes[0] == outcomes[1]
    check(work, outcomes[0], {"main": CAUGHT, "main_forged": REFUSED})


@pytest.mark.dist
def test_fsdp_checkpoint_refuses_payloads_in_metadata_shards_and_file(tmp_path):
    work = str(tmp_path)
    plants = [
        ("main_forged", "epoch_1.pth", True),
        ("metadata", "epoch_1.pth.dcp/.metadata", False),
        ("metadata_forged", "epoch_1.pth.dcp/.metadata", True),
        ("shard", "epoch_1.pth.dcp/__1_0.distcp", False),
        ("dcp_entry", "", True),  # a payload as a non-tensor entry of the shards
    ]
    strategy = dict(type="FSDPStrategy", wrap_policy=["Linear"])
    outcomes = run_distributed(payload_cases.refuse_payloads, work, strategy, plants, timeout=180)
    assert outcomes[0] == outcomes[1]
    check(work, outcomes[0], {
        "main_forged": REFUSED, "metadata": CAUGHT, "metadata_forged": REFUSED,
        "shard": CAUGHT, "dcp_entry": REFUSED,
    })  # fmt: skip


@pytest.mark.dist
def test_deepspeed_checkpoint_refuses_payloads_in_its_engine_files(tmp_path):
    pytest.importorskip("deepspeed", reason="deepspeed not installed (cadence[deepspeed])")
    work = str(tmp_path)
    state = "epoch_1.pth.ds/state"
    plants = [
        ("model_states", f"{state}/mp_rank_00_model_states.pt", False),
        ("model_states_forged", f"{state}/mp_rank_00_model_states.pt", True),
        ("optim_states_forged", f"{state}/zero_pp_rank_0_mp_rank_00_optim_states.pt", True),
    ]
    strategy = dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=2))
    outcomes = run_distributed(payload_cases.refuse_payloads, work, strategy, plants, timeout=240)
    check(work, outcomes[0], {
        "model_states": CAUGHT, "model_states_forged": REFUSED,
        "optim_states_forged": REFUSED,
    })  # fmt: skip
