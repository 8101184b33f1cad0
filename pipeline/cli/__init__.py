"""The `hindsight` command line, one module per command group (the entry point is `main.main`)."""
