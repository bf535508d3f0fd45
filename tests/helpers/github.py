"""The repository and token of the GitHub stand-in (the `github` fixture, tests/github)."""

REPOSITORY = "acme/fleet-config"
#: Distinctive, so that a test can look for it anywhere in the output.
TOKEN = "ghp_StandInToken0123456789abcdefXYZ"
