"""The CLI's subcommands, one module each, every module exposing ``register(subparsers)``."""
