"""The agent sandbox: the image, the in-container entrypoint and the Docker runner.

Nothing is imported here: the container side (sandbox.container, sandbox.agents) runs in an
image without the Docker SDK, the host side (sandbox.host.executor, sandbox.runs.batch) needs it.
"""
