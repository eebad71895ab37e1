"""Every file of a run and a batch (docs/formats.md, "The run directory"), one owner module each,
imported by the addon, the scorer and the sandbox alike:

| file | module |
|---|---|
| data/interception.json, data/.proxy-ready | `interception` |
| data/requests.jsonl (its line models, its reader) | `requestlog` |
| requests.jsonl's writer under its byte budget, data/requests-summary.json | `requestwriter` |
| data/usage.json (the agent's model calls, counted by the proxy) | `usage` |
| data/traffic.har (the run's traffic as HAR 1.2, built from requests.jsonl) | `har`, `traffic` |
| agent/result.json (a harness's own claim) | `agentresult` |
| run-meta.json (its objects: claim, executor blocks, provenance) | `runmeta`, `runblocks` |
| batch-summary.json | `batchsummary` |
| run and batch directory names, finding runs' identity in paths | `layout`, `runpath` |
| provenance (versions, git SHA) in summaries | `provenance` |

`outcome` owns how a run ended (stop reasons, result categories, the one classify); `reserve`
the space kept back for recording it; `atomic`
writes files so a reader sees the old one or the new one; `jsonfile` reads them, with one error
(RecordError: file, field, problem).
"""
