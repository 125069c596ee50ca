"""OptimWrapper: updates, accumulation, clipping and state, checked against plain torch."""

from __future__ import annotations

import copy
import os
import socket
import warnings
from contextlib import contextmanager

import pytest
import torch
import torch.multiprocessing as mp
from torch import nn

from cadence.optim import OptimWrapper
from cadence.registry import OPTIM_WRAPPERS


def _model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def _data(n: int, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, 4, generator=gen), torch.randn(n, 2, generator=gen)


def _loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(model(x), y)


def _params(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _assert_params_close(a: nn.Module, b: nn.Module, atol: float = 1e-6) -> None:
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(pa, pb, atol=atol, rtol=1e-5)


def _sgd(model: nn.Module, **kw) -> torch.optim.SGD:
    return torch.optim.SGD(model.parameters(), lr=kw.pop("lr", 0.1), **kw)


# ---------------------------------------------------------------- updating
def test_update_params_is_one_hand_written_sgd_step():
    model, ref = _model(), _model()
    wrapper = OptimWrapper(_sgd(model))
    x, y = _data(8)
    wrapper.update_params(_loss(model, x, y))
    _loss(ref, x, y).backward()
    with torch.no_grad():
        for p in ref.parameters():
            p -= 0.1 * p.grad
    _assert_params_close(model, ref)
    assert all(p.grad is None for p in model.parameters())  # zero_grad ran
    assert wrapper.inner_count == 1


def test_accumulating_four_micro_batches_equals_one_big_batch():
    model, ref = _model(), _model()
    wrapper = OptimWrapper(_sgd(model, momentum=0.9, weight_decay=1e-2), accumulative_counts=4)
    ref_opt = _sgd(ref, momentum=0.9, weight_decay=1e-2)
    for window in range(2):
        x, y = _data(32, seed=window)
        for chunk in range(4):
            sl = slice(8 * chunk, 8 * chunk + 8)
            wrapper.update_params(_loss(model, x[sl], y[sl]))
        ref_opt.zero_grad()
        _loss(ref, x, y).backward()
        ref_opt.step()
        _assert_params_close(model, ref)
    assert wrapper.inner_count == 8


def test_parameters_change_only_when_a_window_closes():
    model = _model()
    wrapper = OptimWrapper(_sgd(model), accumulative_counts=3)
    x, y = _data(8)
    history = []
    for _ in range(6):
        before = _params(model)
        wrapper.update_params(_loss(model, x, y))
        changed = any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
        history.append((changed, wrapper.should_update()))
    assert history == [(False, False), (False, False), (True, True)] * 2


def test_incomplete_last_window_divides_by_the_remainder():
    # 10 iterations with accumulative_counts=4: windows of 4, 4 and 2 micro-batches.
    model, ref = _model(), _model()
    wrapper = OptimWrapper(_sgd(model), accumulative_counts=4)
    wrapper.initialize_count_status(model, 0, 10)
    assert wrapper.max_counts == 10
    ref_opt = _sgd(ref)
    x, y = _data(80)
    updates = []
    for i in range(10):
        sl = slice(8 * i, 8 * i + 8)
        wrapper.update_params(_loss(model, x[sl], y[sl]))
        updates.append(wrapper.should_update())
    for start, stop in ((0, 32), (32, 64), (64, 80)):
        ref_opt.zero_grad()
        _loss(ref, x[start:stop], y[start:stop]).backward()
        ref_opt.step()
    _assert_params_close(model, ref)
    assert [i + 1 for i, u in enumerate(updates) if u] == [4, 8, 10]


def test_scale_loss_by_window():
    wrapper = OptimWrapper(_sgd(_model()), accumulative_counts=4)
    one = torch.tensor(1.0)
    assert wrapper.scale_loss(one).item() == pytest.approx(0.25)  # no max_counts yet
    wrapper.initialize_count_status(_model(), 8, 11)
    assert wrapper.scale_loss(one).item() == pytest.approx(1 / 3)
    wrapper.initialize_count_status(_model(), 4, 11)
    assert wrapper.scale_loss(one).item() == pytest.approx(0.25)
    wrapper.initialize_count_status(_model(), 12, 12)  # past the end: plain windows
    assert wrapper.scale_loss(one).item() == pytest.approx(0.25)
    assert OptimWrapper(_sgd(_model())).scale_loss(one) is one


def test_resume_mid_window_warns_and_updates_at_the_next_boundary():
    model = _model()
    wrapper = OptimWrapper(_sgd(model), accumulative_counts=4)
    with pytest.warns(UserWarning, match="not a multiple of accumulative_counts=4"):
        wrapper.initialize_count_status(model, 5, 20)
    assert wrapper.inner_count == 5
    x, y = _data(8)
    flags = []
    for _ in range(3):
        wrapper.update_params(_loss(model, x, y))
        flags.append(wrapper.should_update())
    assert flags == [False, False, True]


def test_batchnorm_with_accumulation_warns():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    wrapper = OptimWrapper(_sgd(model), accumulative_counts=2)
    with pytest.warns(UserWarning, match="BatchNorm"):
        wrapper.initialize_count_status(model, 0, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OptimWrapper(_sgd(model)).initialize_count_status(model, 0, 10)


def test_step_and_zero_kwargs_reach_the_optimizer():
    model = _model()
    wrapper = OptimWrapper(_sgd(model))
    x, y = _data(8)
    calls = []

    def closure():
        calls.append(1)
        return torch.tensor(0.0)

    wrapper.update_params(
        _loss(model, x, y), step_kwargs={"closure": closure}, zero_kwargs={"set_to_none": False}
    )
    assert calls == [1]
    assert all(p.grad is not None and not p.grad.any() for p in model.parameters())


@pytest.mark.parametrize(
    "bad", [0, -1, 1.5, True, "2"], ids=["zero", "negative", "float", "bool", "str"]
)
def test_accumulative_counts_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="accumulative_counts must be an int >= 1"):
        OptimWrapper(_sgd(_model()), accumulative_counts=bad)


def test_optimizer_must_be_an_optimizer():
    with pytest.raises(TypeError, match="needs a torch.optim.Optimizer"):
        OptimWrapper(object())  # type: ignore[arg-type]


def test_built_from_registry_config():
    model = _model()
    wrapper = OPTIM_WRAPPERS.build(
        dict(type="OptimWrapper", accumulative_counts=2, clip_grad=dict(max_norm=1.0)),
        default_args=dict(optimizer=_sgd(model)),
    )
    assert isinstance(wrapper, OptimWrapper)
    assert wrapper.accumulative_counts == 2 and wrapper.clip_grad_kwargs == {"max_norm": 1.0}


# ---------------------------------------------------------------- clipping
def test_clip_by_norm_matches_torch_and_logs_the_total_norm():
    model, ref = _model(), _model()
    wrapper = OptimWrapper(_sgd(model), clip_grad=dict(max_norm=0.05, norm_type=2))
    x, y = _data(8)
    assert wrapper.pop_log_vars() == {}
    wrapper.update_params(_loss(model, x, y))
    _loss(ref, x, y).backward()
    total = torch.nn.utils.clip_grad_norm_(ref.parameters(), max_norm=0.05)
    with torch.no_grad():
        for p in ref.parameters():
            p -= 0.1 * p.grad
    _assert_params_close(model, ref)
    logged = wrapper.pop_log_vars()
    assert set(logged) == {"grad_norm"}
    assert isinstance(logged["grad_norm"], torch.Tensor) and not logged["grad_norm"].requires_grad
    torch.testing.assert_close(logged["grad_norm"], total)
    assert total > 0.05  # the clip was active
    assert wrapper.pop_log_vars() == {}  # popped once


def test_no_grad_norm_logged_on_accumulation_steps():
    model = _model()
    wrapper = OptimWrapper(_sgd(model), accumulative_counts=2, clip_grad=dict(max_norm=1.0))
    x, y = _data(8)
    wrapper.update_params(_loss(model, x, y))
    assert wrapper.pop_log_vars() == {}
    wrapper.update_params(_loss(model, x, y))
    assert set(wrapper.pop_log_vars()) == {"grad_norm"}


def test_clip_by_value_matches_torch():
    model, ref = _model(), _model()
    cfg = dict(type="value", clip_value=0.01)
    wrapper = OptimWrapper(_sgd(model), clip_grad=cfg)
    assert cfg == dict(type="value", clip_value=0.01)  # caller's dict untouched
    x, y = _data(8)
    wrapper.update_params(_loss(model, x, y))
    _loss(ref, x, y).backward()
    torch.nn.utils.clip_grad_value_(ref.parameters(), 0.01)
    with torch.no_grad():
        for p in ref.parameters():
            p -= 0.1 * p.grad
    _assert_params_close(model, ref)
    assert wrapper.pop_log_vars() == {}


@pytest.mark.parametrize(
    ("cfg", "error", "match"),
    [
        (dict(max_nrom=1.0), ValueError, "unknown key 'max_nrom'.*Did you mean 'max_norm'"),
        (dict(type="value", max_norm=1.0), ValueError, "unknown key 'max_norm' for type='value'"),
        (dict(type="nrom", max_norm=1.0), ValueError, "'norm' or 'value'.*Did you mean 'norm'"),
        (dict(norm_type=2), ValueError, "needs 'max_norm'"),
        (dict(type="value"), ValueError, "needs 'clip_value'"),
        (1.0, TypeError, "clip_grad must be None or a dict"),
    ],
)
def test_clip_grad_config_errors(cfg, error, match):
    with pytest.raises(error, match=match):
        OptimWrapper(_sgd(_model()), clip_grad=cfg)


# ---------------------------------------------------------------- reading
def test_get_lr_and_momentum():
    model = _model()
    sgd = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.8))
    assert sgd.get_lr() == {"lr": [0.05]}
    assert sgd.get_momentum() == {"momentum": [0.8]}
    adam = OptimWrapper(torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.7, 0.99)))
    assert adam.get_momentum() == {"momentum": [0.7]}
    adagrad = OptimWrapper(torch.optim.Adagrad(model.parameters(), lr=0.1))
    assert adagrad.get_momentum() == {"momentum": [0]}


def test_several_groups_add_a_base_pseudo_group():
    model = _model()
    groups = [
        {"params": model[0].parameters(), "lr": 0.01},
        {"params": model[2].parameters()},
    ]
    wrapper = OptimWrapper(torch.optim.SGD(groups, lr=0.1, momentum=0.9))
    assert wrapper.get_lr() == {"base_lr": [0.1], "lr": [0.01, 0.1]}
    assert len(wrapper.param_groups) == 3 and wrapper.param_groups[-1]["lr"] == 0.1
    assert wrapper.param_groups[:2] == wrapper.optimizer.param_groups
    assert wrapper.defaults is wrapper.optimizer.defaults
    wrapper.param_groups[-1]["lr"] = 0.5  # schedulers write into the pseudo group
    assert wrapper.get_lr()["base_lr"] == [0.5]
    state = wrapper.state_dict()
    assert state["base_param_settings"]["lr"] == 0.5
    one = OptimWrapper(_sgd(model))
    assert len(one.param_groups) == 1 and "base_param_settings" not in one.state_dict()


def test_repr_names_type_counts_and_optimizer():
    text = repr(OptimWrapper(_sgd(_model()), accumulative_counts=3, clip_grad=dict(max_norm=2)))
    assert "Type: OptimWrapper" in text and "accumulative_counts: 3" in text
    assert "max_norm=2" in text and "SGD (" in text


# ---------------------------------------------------------------- state
def test_state_dict_round_trip_resumes_adam_exactly():
    x, y = _data(8)
    model_a = _model()
    wrapper_a = OptimWrapper(torch.optim.Adam(model_a.parameters(), lr=1e-2))
    for _ in range(3):
        wrapper_a.update_params(_loss(model_a, x, y))
    state = copy.deepcopy(wrapper_a.state_dict())
    model_b = copy.deepcopy(model_a)
    wrapper_b = OptimWrapper(torch.optim.Adam(model_b.parameters(), lr=1.0))
    wrapper_b.load_state_dict(state)
    assert wrapper_b.get_lr() == {"lr": [1e-2]}
    for _ in range(2):
        wrapper_a.update_params(_loss(model_a, x, y))
        wrapper_b.update_params(_loss(model_b, x, y))
    _assert_params_close(model_a, model_b, atol=0)


def test_load_state_dict_keeps_the_argument_and_restores_base_settings():
    model = _model()
    groups = [{"params": model[0].parameters()}, {"params": model[2].parameters()}]
    wrapper = OptimWrapper(torch.optim.SGD(groups, lr=0.1))
    wrapper.param_groups[-1]["lr"] = 0.02
    state = wrapper.state_dict()
    other = OptimWrapper(
        torch.optim.SGD(
            [{"params": model[0].parameters()}, {"params": model[2].parameters()}], lr=0.1
        )
    )
    other.load_state_dict(state)
    assert "base_param_settings" in state
    assert other.get_lr()["base_lr"] == [0.02]
    with pytest.raises(TypeError, match="state_dict must be a dict"):
        other.load_state_dict([])  # type: ignore[arg-type]


# ---------------------------------------------------------------- no_sync
class _NoSyncRecorder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = _model()
        self.entered: list[int] = []
        self.calls = 0
        self.syncing = True

    @contextmanager
    def no_sync(self):
        self.entered.append(self.calls)
        self.syncing = False
        try:
            yield
        finally:
            self.syncing = True

    def forward(self, x):
        self.calls += 1
        return self.net(x)


def test_no_sync_is_entered_exactly_on_non_update_steps():
    model = _NoSyncRecorder()
    wrapper = OptimWrapper(_sgd(model), accumulative_counts=3)
    wrapper.initialize_count_status(model, 0, 7)
    x, y = _data(8)
    updated = []
    for _ in range(7):
        with wrapper.optim_context(model):
            loss = nn.functional.mse_loss(model(x), y)
        wrapper.update_params(loss)
        updated.append(wrapper.should_update())
    assert model.entered == [0, 1, 3, 4]  # forward index at entry; iterations 3, 6, 7 sync
    assert [i for i, u in enumerate(updated) if u] == [2, 5, 6]
    assert model.syncing


def test_no_sync_never_used_without_accumulation():
    model = _NoSyncRecorder()
    wrapper = OptimWrapper(_sgd(model))
    x, y = _data(8)
    for _ in range(3):
        with wrapper.optim_context(model):
            loss = nn.functional.mse_loss(model(x), y)
        wrapper.update_params(loss)
    assert model.entered == []


def test_context_without_accumulation_is_one_reusable_no_op():
    model = _NoSyncRecorder()
    wrapper = OptimWrapper(_sgd(model))
    first = wrapper.optim_context(model)
    assert wrapper.optim_context(model) is first  # nothing allocated per iteration
    with first:
        with wrapper.optim_context(model):  # re-entrant
            pass
    assert model.entered == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ddp_worker(rank: int, world: int, port: int, results) -> None:
    import datetime

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group(
        "gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=30)
    )
    try:
        model = DistributedDataParallel(_model())
        wrapper = OptimWrapper(_sgd(model), accumulative_counts=2)
        wrapper.initialize_count_status(model, 0, 2)
        x, y = _data(32)
        grads_after_first = None
        for micro in range(2):  # rank r takes rows [16r + 8m, 16r + 8m + 8)
            sl = slice(16 * rank + 8 * micro, 16 * rank + 8 * micro + 8)
            with wrapper.optim_context(model):
                loss = _loss(model, x[sl], y[sl])
            wrapper.backward(wrapper.scale_loss(loss))
            if micro == 0:
                grads_after_first = [p.grad.clone() for p in model.parameters()]
        assert wrapper.should_update()
        wrapper.step()
        wrapper.zero_grad()
        # plain lists: tensors sent through a queue would outlive this process's memory
        results.put(
            (
                rank,
                [g.tolist() for g in grads_after_first],
                [p.tolist() for p in _params(model.module)],
            )
        )
    finally:
        dist.destroy_process_group()


@pytest.mark.dist
def test_ddp_accumulation_skips_allreduce_until_the_update_and_matches_one_big_batch():
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_ddp_worker, args=(r, 2, port, results)) for r in range(2)]
    for proc in procs:
        proc.start()
    got = {}
    try:
        for _ in range(2):
            rank, first_grads, params = results.get(timeout=45)
            got[rank] = (first_grads, params)
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
    assert all(proc.exitcode == 0 for proc in procs)
    # Under no_sync the first micro-batch's gradients stay local (they differ by rank) ...
    assert any(
        not torch.allclose(torch.tensor(a), torch.tensor(b)) for a, b in zip(got[0][0], got[1][0])
    )
    # ... and after the synced update both ranks equal one SGD step on all 32 rows.
    ref = _model()
    x, y = _data(32)
    _loss(ref, x, y).backward()
    with torch.no_grad():
        for p in ref.parameters():
            p -= 0.1 * p.grad
    for rank in (0, 1):
        for got_p, ref_p in zip(got[rank][1], ref.parameters()):
            torch.testing.assert_close(torch.tensor(got_p), ref_p.detach(), atol=1e-6, rtol=1e-5)


def test_accumulation_pending_sees_an_open_window_in_any_wrapper():
    from cadence.optim import OptimWrapperDict, accumulation_pending

    def wrapper():
        model = torch.nn.Linear(2, 1)
        w = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=2)
        w.initialize_count_status(model, 0, 4)
        return model, w

    model_a, a = wrapper()
    model_b, b = wrapper()
    both = OptimWrapperDict(a=a, b=b)
    assert not accumulation_pending(a) and not accumulation_pending(both)
    a.update_params(model_a(torch.ones(1, 2)).sum())  # first micro-batch of a window
    assert accumulation_pending(a) and accumulation_pending(both) and not accumulation_pending(b)
    a.update_params(model_a(torch.ones(1, 2)).sum())  # closes it
    assert not accumulation_pending(both)


@pytest.mark.parametrize("method", ["scale_loss", "backward", "should_update", "step", "zero_grad"])
def test_update_params_calls_a_subclass_override(method):
    """update_params skips its own small steps only when no subclass replaces one of them."""
    calls: list[str] = []

    def record(self, *args, **kwargs):
        calls.append(method)
        return getattr(OptimWrapper, method)(self, *args, **kwargs)

    Subclass = type("Subclass", (OptimWrapper,), {method: record})
    model = _model()
    wrapper = Subclass(_sgd(model))
    wrapper.update_params(_loss(model, *_data(4)))
    assert calls == [method]
