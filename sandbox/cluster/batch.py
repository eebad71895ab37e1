"""clawbench-sandbox batch --backend ray: the batch's runs on a Ray cluster, the rest as local.

The plan (which tasks run, --resume's kept runs), the summary, the final scoring and the exit
code are the local batch's (sandbox.host.batch); only where the runs execute differs. Before
any run: the driver connects to the cluster, checks that some node can take a run, and records
its image's ID. While the runs go: the --env values wait behind a one-time ticket per run
(cluster.handoff), the judge starts on each run as it lands (scorer.live), and the progress is
printed as runs land.
"""

from __future__ import annotations

import secrets
import shutil
import socket
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import docker

from proxy_addon.records import BatchJob, BatchStatus, Category, case_name, is_infra_category
from sandbox.cluster.dispatch import Dispatcher, Setup
from sandbox.cluster.handoff import EnvHandoff
from sandbox.cluster.images import save_chunks
from sandbox.cluster.node import DRIVER_LABEL
from sandbox.cluster.nodes import RESOURCE, Demand, Nodes
from sandbox.cluster.returns import Result
from sandbox.cluster.transfer import RETURN_LIMIT
from sandbox.host import ApiStreak, BatchOptions, BatchPlan, Executed, RunRequest, run_batch
from sandbox.host import docker_api as engine
from sandbox.runs import job_of, say
from scorer.live import LiveScoring


class ClusterError(engine.EngineError):
    """No Ray cluster answers, or none of its nodes can take a run; the message says the fix."""


@dataclass(frozen=True)
class RayOptions:
    address: str | None
    """HEAD:PORT of the cluster's head, or None: RAY_ADDRESS, else a cluster on this machine."""
    return_limit: int = RETURN_LIMIT


def _check_address(address: str) -> None:
    """A quick look that something listens at HEAD:PORT (Ray itself would retry for minutes)."""
    host, sep, port = address.rpartition(":")
    if address.startswith("ray://") or not sep or not port.isdigit():
        raise ClusterError(
            f"--ray-address {address}: give the head's HEAD:PORT (its GCS, 6379 by default); "
            "Ray Client (ray://) is not supported, run the driver on a node of the cluster"
        )
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as e:
        raise ClusterError(
            f"--ray-address {address}: nothing answers there ({e}); is `ray start --head` "
            "running on it, and its port open to this machine?"
        ) from e


def _connect(address: str | None) -> str | None:
    """Join the cluster as its driver; the dashboard's URL when it has one."""
    import ray

    if address is not None:
        _check_address(address)
    try:
        context = ray.init(address=address or "auto", logging_level="WARNING", log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = address or "RAY_ADDRESS or this machine"
        raise ClusterError(
            f"no Ray cluster at {where} ({e}); start one with `ray start --head --resources "
            f"'{{\"{RESOURCE}\": 4}}'` or give --ray-address HEAD:6379"
        ) from e
    url = getattr(context, "dashboard_url", None)
    return f"http://{url}" if url and not url.startswith("http") else url


def _check_nodes(demand: Demand) -> Nodes:
    import ray

    nodes = Nodes(demand)
    nodes.refresh(ray.nodes())
    if nodes.capacity == 0:
        raise ClusterError(
            f"no node of the cluster can take a run ({nodes.why_not()}); each run needs "
            f"{RESOURCE} 1, {demand.cpus} CPU and {demand.memory >> 20} MiB: start nodes with "
            f"`ray start --resources '{{\"{RESOURCE}\": N}}'` or lower --cpus/--memory"
        )
    return nodes


def run_ray_batch(
    client: docker.DockerClient,
    template: RunRequest,
    options: BatchOptions,
    ray_options: RayOptions,
    *,
    json_output: bool = False,
) -> int:
    """The batch on the cluster; exit codes as the local batch's."""
    import ray

    dashboard = _connect(ray_options.address)
    try:
        limits = template.limits
        nodes = _check_nodes(Demand(limits.cpus, limits.memory))
        n = len(nodes.by_id)
        say(
            f"Ray cluster: {n} node(s) with {RESOURCE}, {nodes.capacity} run(s) at once; "
            f"dashboard: {dashboard or 'none (the head runs without one)'}"
        )
        execute = partial(_execute, client, ray_options)
        return run_batch(client, template, options, json_output=json_output, execute=execute)
    finally:
        ray.shutdown()


def _ship(client: docker.DockerClient, image: str) -> list[Any]:
    """The driver's image into the object store, once, as chunks."""
    import ray

    say(f"sending image {image} to the nodes that lack it (docker save, once)")
    return [ray.put(chunk) for chunk in save_chunks(client, image)]


def _execute(
    client: docker.DockerClient,
    ray_options: RayOptions,
    template: RunRequest,
    options: BatchOptions,
    batch_dir: Path,
    plan: BatchPlan,
    streak: ApiStreak,
) -> Executed:
    import ray

    for stale in batch_dir.glob(".incoming-*"):
        shutil.rmtree(stale, ignore_errors=True)  # a driver killed while unpacking
    label = f"{socket.gethostname()}:{batch_dir.resolve()}"
    driver = secrets.token_hex(8)
    labels = {**template.labels, engine.BATCH_LABEL: label, DRIVER_LABEL: driver}
    template = replace(template, out=batch_dir, labels=labels)
    todo = dict(plan.todo)
    jobs = dict(plan.kept)

    def on_result(result: Result) -> None:
        job = job_of(result.run_dir, template.model, case_name(todo[result.index]))
        job.duration_seconds = round(result.duration_s)
        jobs[result.index] = job
        if live is not None and not is_infra_category(result.ending.category):
            live.add(result.run_dir)

    image_id = template.check_image(client).id
    handoff = EnvHandoff(template.env, ray.util.get_node_ip_address()) if template.env else None
    live: LiveScoring | None = None
    setup = Setup(
        template=template,
        batch_dir=batch_dir,
        image_id=image_id,
        batch_label=label,
        driver_token=driver,
        return_limit=ray_options.return_limit,
        concurrency=options.concurrency,
        handoff=handoff,
        ship_image=partial(_ship, client, template.image),
    )
    limits = template.limits
    nodes = Nodes(Demand(limits.cpus, limits.memory))
    dispatcher = Dispatcher(setup, todo, nodes, on_result, streak)
    interrupted = True
    try:
        if options.judge is not None:
            live = LiveScoring(options.judge, options.models_yaml)
        interrupted = dispatcher.run()
    finally:
        if handoff is not None:
            handoff.close()
        if live is not None:
            live.close(cancel=interrupted)
            for problem in live.problems:
                say(f"live judging skipped {problem}; the final scoring reads it again")
    if dispatcher.gave_up:
        say(f"stopping: {dispatcher.gave_up}")
    for index, case_dir in todo.items():
        if index not in jobs:
            status = BatchStatus.ERROR if dispatcher.gave_up else BatchStatus.SKIPPED
            category = Category.INFRA_FAILURE if dispatcher.gave_up else None
            jobs[index] = BatchJob(
                model=template.model,
                case=case_name(case_dir),
                status=status,
                result_category=category,
            )
    return Executed(jobs, interrupted, options.concurrency or dispatcher.widest)


__all__ = ["ClusterError", "RayOptions", "run_ray_batch"]
