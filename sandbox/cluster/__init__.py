"""A batch on a Ray cluster (`clawbench-sandbox batch --backend ray`, docs/scale-out.md).

The driver's side: `batch.run_ray_batch` (connect, then the local batch's plan, summary and
scoring with the runs sent out by `dispatch.Dispatcher`), `nodes` (which node takes a run),
`returns` and `missing` (what comes back, made the run's record), `progress`. The node's side:
`node` (the Ray tasks: the run pipeline with `DockerExecutor` on the node's engine), `images`
(the driver's image there). Between them: `order` (what a task carries), `transfer` (the run
directory back, bounded and checked), `handoff` (the `--env` values, outside Ray). `batch`,
`dispatch` and `returns` import Ray; the rest loads without it (the node asks Ray only when run).
"""
