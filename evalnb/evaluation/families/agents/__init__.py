"""Metrics over an agent's run: its steps, its tool calls and their reference."""
