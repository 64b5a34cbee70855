"""Sans-I/O protocol pieces: what to send and how to read replies. No sockets, no processes."""
