"""The conditions by name, with the settings each runs under (replace): one place for the
experiment, the analysis and the page (which imports no lab)."""

CONDITIONS = {"on": {"synchronous_commit": "on"}, "off": {"synchronous_commit": "off"}}
