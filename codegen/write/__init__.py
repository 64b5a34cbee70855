"""WRITE: put a GeneratedPackage on disk, or compare it with what is there (`--check`)."""
