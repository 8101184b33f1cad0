"""Stage 3, reading: hybrid recall (dense + BM25, fused and weighted), temporal windows, reflect, access tallies."""
