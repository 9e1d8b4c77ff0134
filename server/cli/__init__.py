"""The ``sluice`` command line: ``serve`` (and the demo), ``run`` (headless), ``user``."""
