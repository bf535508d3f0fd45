"""Adapters: the only modules that import GitPython, boto3 and kubernetes."""
