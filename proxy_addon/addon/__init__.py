"""The addon's own parts: its mitmproxy options, the request log lines, and a launcher that
starts mitmdump with it (demo, tests, bench)."""
