"""`python -m pipeline.cli`: how the supervisor starts each role."""

from pipeline.cli.main import main

main()
