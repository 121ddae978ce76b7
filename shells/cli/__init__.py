"""The `mrpvm` command line (`main.py` holds the app); one module per command group."""
