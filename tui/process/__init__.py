"""Process policy the command line sets for a process it owns: the allocators and the cycle collector."""
