"""Test helpers: plain functions, classes and constants the test modules import (`from
tests.helpers.X import ...`). Fixtures stay in the conftest.py files; no test module imports
another test module or a conftest."""
