"""Keeping a run alive and honest through hangs, faults, preemption and restarts.

* the hang watchdog: :mod:`.heartbeat` (where a rank's loops are), :mod:`.progress_board`
  (where the ranks share it outside the process group), :mod:`.watchdog` (the thread that
  ends a hung job) and :mod:`.hang_watch` (the runner's ``hang_timeout`` setting);
* ending a process from a watch thread: :mod:`.fatal`;
* preemption: :mod:`.signal_watch` (caught stop signals), :mod:`.preempted` (the
  exception that ends a preempted run), :mod:`.slurm_requeue` and :mod:`.cluster` (what
  the launcher says about this attempt of a job; SLURM requeue);
* restarts: :mod:`.auto_resume`, :mod:`.work_dir_lock` (one run per work dir) and
  :mod:`.elastic_store` (a store a torchrun restart cannot mix up).

Nothing is imported here: the process-group helpers (``cadence.dist``) import the
heartbeat, and the auto-resume and lock modules use those helpers in turn.
"""
