"""VALIDATE: which loaded tools the generator may use, and why the others fail."""
