"""The emulator fixtures live in tests/conftest.py, shared by every test directory."""
