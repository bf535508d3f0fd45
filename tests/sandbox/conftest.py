"""The emulator fixtures live in tests/cloud_fixtures.py, shared by every test directory."""
