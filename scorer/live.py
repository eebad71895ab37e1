"""Judge runs as they land, while the rest of the batch still runs (clawbench-sandbox batch
--backend ray).

One event loop on its own thread holds one Scheduler per judge for the whole batch, so the AIMD
limiter and its 429 back-off are shared by every run, as in one clawbench-score call. Each
verdict is written to its judge file as it arrives (scorer.batch.judging), so the batch's final
score() finds them saved and only aggregates. A judge that cannot serve (JudgeFatal) stops the
live judging; the final score() meets the same error and reports it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from scorer.batch import JudgeSpec, Judging, NoProgress, Writer, load_data, load_meta, plan_run
from scorer.judge import CallSettings, JudgeClient, JudgeFatal, JudgeJob, Scheduler
from scorer.models_yaml import JudgeConfig
from scorer.scoring import ScoreOptions, judge_spec


class LiveScoring:
    """Judges each run handed to `add` at once; `close` waits for the verdicts in flight."""

    def __init__(
        self, judge: JudgeConfig, models_yaml: Path | None, calls: CallSettings | None = None
    ) -> None:
        spec = judge_spec(ScoreOptions(paths=[], judges=[judge], models_yaml=models_yaml))
        assert spec is not None
        self.spec: JudgeSpec = spec
        self.calls = calls or CallSettings()
        self.judging = Judging(spec, Writer(), NoProgress())
        self.fatal: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="live-judge")
        self._thread.start()
        self.problems: list[str] = []
        self.schedulers = self._call(self._open()).result()
        """One per judge, for every run of the batch."""

    def _call[T](self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    async def _open(self) -> dict[str, Scheduler]:
        c = self.calls
        return {
            config.name: Scheduler(
                JudgeClient(config, c.timeout),
                c.concurrency,
                backoff=c.backoff,
                rate_deadline=c.rate_deadline,
            )
            for config in self.spec.configs
        }

    def add(self, run_dir: Path) -> None:
        """Judge this run (a placed run directory) as soon as the limiter lets it."""
        self._loop.call_soon_threadsafe(self._plan, run_dir)

    def _plan(self, run_dir: Path) -> None:
        if self.fatal is not None:
            return
        try:
            plan = plan_run(load_data(load_meta(run_dir)), None, self.spec, False)
        except Exception as e:  # the batch's final score() reads it again and reports it
            self.problems.append(f"{run_dir}: {type(e).__name__}: {e}")
            return
        for chosen in self.judging.select([(plan, True)], None):
            self.judging.expect(chosen)
            for pending in chosen.pending.values():
                task = self._loop.create_task(self._judge(pending.job))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _judge(self, job: JudgeJob) -> None:
        try:
            result = await self.schedulers[job.judge].judge(job)
        except JudgeFatal as e:
            self.fatal = str(e)
            for task in self._tasks:
                task.cancel()
            return
        self.judging.record(result)

    async def _drain(self, cancel: bool) -> None:
        while self._tasks:
            if cancel:
                for task in self._tasks:
                    task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for scheduler in self.schedulers.values():
            await scheduler.client.close()

    def close(self, *, cancel: bool = False) -> None:
        """Wait for every verdict asked for (cancel: drop them, Ctrl-C), then stop the loop."""
        try:
            self._call(self._drain(cancel)).result()
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()


__all__ = ["LiveScoring"]
