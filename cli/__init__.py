"""agrad's command line: one client of `agrad.graphs`.

The CLI computes nothing. Each command (one module under `commands/`) asks the
library for a plain result object (`agrad.graphs.results`) and hands it to a
renderer: `tables` and friends return rich renderables for people, `json_docs`
builds plain dicts for scripts, `github` prints workflow commands. Exit statuses
are decided in `status`, and only there.
"""
