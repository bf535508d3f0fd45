"""Channels, pins, gates, promotion, rollback and history."""
