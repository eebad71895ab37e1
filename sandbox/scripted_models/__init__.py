"""Scripted model servers: fake model APIs on loopback that answer from a script (tests, demo)."""
