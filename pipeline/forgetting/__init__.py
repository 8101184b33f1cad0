"""Stage 4, forgetting by disuse: exponential weight decay. Pure."""
