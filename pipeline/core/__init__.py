"""The core every stage shares: domain values, the error tree, Settings, logging and the ports (Protocols) the use cases depend on. No adapter, no framework, no I/O."""
