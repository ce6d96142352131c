"""Test-only mutation of real collectives: proves that --check sees every wrong result."""
