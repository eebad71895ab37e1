"""Code that runs inside the agent container (as root): entrypoint, firewall, trust, submit page."""
