"""clawbench-demo: a demo website, agents of three kinds, the proxy, a batch and its score."""
