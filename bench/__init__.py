"""srlens's benchmarks: `python -m bench.harness list` names them; docs/performance.md holds their figures."""
