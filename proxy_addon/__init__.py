"""The shared layer and the interception addon.

- `proxy_addon.clawbench`: the mitmproxy addon (`mitmdump -s proxy_addon/clawbench.py`).
- `proxy_addon.addon`: what only the addon uses: its options, the request log, the launcher.
- `proxy_addon.tasks`: task.json (the model, corpus discovery, validation, lint, clawbench-tasks).
- `proxy_addon.matching`: the one matcher (canonical URLs, bodies, redaction) the addon and the
  scorer share.
- `proxy_addon.records`: every file of a run and a batch, each with one model, one writer and one
  reader; how a run ended (stop reasons, result categories, the one classify); the directory
  layout.
"""
