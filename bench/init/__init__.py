"""`distbench init`: how long a process group takes to start, per init method."""
