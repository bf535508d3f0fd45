"""The local sandbox: a Kubernetes API emulator and throw-away config repos for tests and demo."""
