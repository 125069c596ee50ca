# Copyright (c) toyproj authors. All rights reserved.
from typing import Optional, Sequence

from cadence.hooks import Hook

from toyproj.registry import HOOKS

DATA_BATCH = Optional[Sequence[dict]]


@HOOKS.register_module()
class LossTrendHook(Hook):
    """Track the smoothed training loss and its best value.

    Every ``interval`` training iterations the hook reads the loss history
    from the message hub, writes its running mean to the visualizer's
    backends as ``smoothed_loss`` and records the lowest value seen so far in
    the message hub's runtime info (``best_smoothed_loss``), so that other
    hooks and the checkpoint can use it.

    Args:
        interval (int): How often (in iterations) to update. Defaults to 10.
        window_size (int): Number of recent losses averaged. Defaults to 10.
    """

    priority = 'BELOW_NORMAL'

    def __init__(self, interval: int = 10, window_size: int = 10) -> None:
        self.interval = interval
        self.window_size = window_size
        self.best_loss = float('inf')

    def before_run(self, runner) -> None:
        self.message_hub = runner.message_hub
        self.visualizer = runner.visualizer
        runner.logger.info(
            f'{self.__class__.__name__}: smoothing the loss over '
            f'{self.window_size} iterations, every {self.interval} '
            'iterations')

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch: DATA_BATCH = None,
                         outputs: Optional[dict] = None) -> None:
        if not self.every_n_train_iters(runner, self.interval):
            return
        smoothed = self.message_hub.get_scalar('train/loss').mean(
            self.window_size)
        smoothed = float(smoothed)
        self.best_loss = min(self.best_loss, smoothed)
        self.message_hub.update_info('best_smoothed_loss', self.best_loss)
        self.visualizer.add_scalars(
            dict(smoothed_loss=smoothed), step=runner.iter + 1)

    def after_run(self, runner) -> None:
        if self.best_loss == float('inf'):  # no training iteration (test)
            return
        runner.logger.info(
            f'{self.__class__.__name__}: best smoothed loss '
            f'{self.best_loss:.4f}')
