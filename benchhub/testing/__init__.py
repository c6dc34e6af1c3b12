"""Test helpers shared by the apps' tests: realistic payloads, factories and personas."""
