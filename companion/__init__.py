"""Table Companion: reads a game table from a photo, checks plays, keeps the score."""

__version__ = "0.1.0"
