"""The host side of the sandbox: the image build (`image`), the Docker SDK calls (`docker_api`),
what goes into a container before it starts (`payload`), and the executor that runs one task in
a container (`executor.DockerExecutor`)."""
