"""MODEL: validated tools -> `PackageIR`, what the renderer prints, every name and order fixed."""
