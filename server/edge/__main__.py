"""``python -m server.edge CORE CHANNEL``: an edge process, as ``sluice serve`` starts it, its
settings from the same file and overrides (JSON on its standard input)."""

import json
import sys

from server.edge.process import run
from server.settings import logs
from server.settings.config import load_settings

given = json.load(sys.stdin)
settings = load_settings(given["config_file"], given["overrides"])
logs.configure(settings.log_level, settings.log_format)
run(settings, sys.argv[1], sys.argv[2])
