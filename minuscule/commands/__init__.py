"""Implementations of CLI subcommands that belong to no other package."""
