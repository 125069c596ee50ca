"""Attribution of traced ops to modules, unsupported ops and uncalled modules."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cadence.analysis import FlopAnalyzer, JitModelAnalysis
from cadence.analysis.handles import linear_flop_jit


class Borrower(nn.Module):
    """Calls a module it does not own, and owns one it calls through another method."""

    def __init__(self, shared: nn.Module) -> None:
        super().__init__()
        self.shared = shared
        self.head = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 4)
        self.layers = nn.ModuleList([nn.Linear(4, 4)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.sigmoid(self.layers[0](self.shared(x))))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.branch = Borrower(self.body)  # body is shared: canonical name "body"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.branch(self.body(x))


def test_owner_and_caller_modes_attribute_a_shared_module_differently() -> None:
    x = torch.randn(3, 4)
    owner = FlopAnalyzer(Net(), x)
    caller = FlopAnalyzer(Net(), x).ancestor_mode("caller")
    body, layer, head = 3 * 4 * 4, 3 * 4 * 4, 3 * 4 * 2
    # body runs twice (once called by the root, once by branch); its ops belong to body
    assert owner.by_module()["body"] == caller.by_module()["body"] == 2 * body
    assert owner.total("branch") == layer + head  # owner: body is not branch's
    assert caller.total("branch") == body + layer + head  # caller: branch ran it
    assert owner.total() == caller.total() == 2 * body + layer + head
    assert owner.canonical_module_name("branch.shared") == "body"
    assert owner.total("branch.shared") == 2 * body


def test_unsupported_ops_and_uncalled_modules_are_logged_once(warnings_logged) -> None:
    analysis = FlopAnalyzer(Net(), torch.randn(3, 4)).ancestor_mode("caller")
    assert analysis.unsupported_ops("branch") == {"aten::sigmoid": 1}
    assert analysis.unsupported_ops("body") == {}
    # no op ran with the ModuleList's forward running (it has none)
    assert analysis.uncalled_modules() == {"branch.unused", "branch.layers"}
    analysis.total()  # cached: nothing logged again
    assert len(warnings_logged) == 2
    assert "aten::sigmoid encountered 1 time(s)" in warnings_logged[0]
    # the ModuleList is not expected to be called: only the unused Linear is reported
    assert "never called" in warnings_logged[1]
    assert warnings_logged[1].endswith(": branch.unused")


def test_a_handle_counts_only_its_op_and_setting_one_recounts() -> None:
    analysis = JitModelAnalysis(Net(), torch.randn(3, 4)).unsupported_ops_warnings(False)
    assert analysis.total() == 0
    analysis.set_op_handle("aten::linear", linear_flop_jit)
    assert analysis.by_operator("branch.head") == {"linear": 3 * 4 * 2}
    analysis.set_op_handle("aten::linear", None)  # None: ignore the op
    assert analysis.total() == 0 and "aten::linear" not in analysis.unsupported_ops()


def test_a_handle_returning_a_non_count_is_refused() -> None:
    analysis = JitModelAnalysis(nn.Linear(2, 2), torch.randn(1, 2))
    analysis.set_op_handle("aten::linear", lambda inputs, outputs: "many")
    with pytest.raises(TypeError, match="aten::linear returned str"):
        analysis.total()


def test_unknown_module_names_and_modes_are_refused() -> None:
    analysis = FlopAnalyzer(Net(), torch.randn(3, 4))
    with pytest.raises(KeyError, match="'bodyy' is not a module of the analyzed Net"):
        analysis.total("bodyy")
    with pytest.raises(ValueError, match="Unrecognized ancestor mode: 'parent'"):
        analysis.ancestor_mode("parent")
