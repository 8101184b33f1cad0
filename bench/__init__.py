"""`hindsight bench ...`: measurements that print side-by-side ratios and update BENCHMARKS.md."""
