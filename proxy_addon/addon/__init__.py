"""The addon's own parts: its mitmproxy options (`options`), what a request names and where it
may go (`names`, `destination`, `private`), its evaluation against the matcher (`evaluation`),
the log lines and the interception record (`requestlog`, `runfiles`), the agent's model calls
(`modelhosts`, `modeltraffic`, `usage`), and a launcher that starts mitmdump with it."""
