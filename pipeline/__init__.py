"""Hindsight: after-the-fact review of LLM agent memory."""

__version__ = "0.1.0"
