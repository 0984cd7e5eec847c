"""``uv pip install ARGS`` into this interpreter's environment, with pip's own configuration.

``make setup`` installs with uv where it can: uv downloads, unpacks and byte-compiles on every core,
in about half the time pip takes for the same packages. uv reads no pip configuration, so this passes
it on: the index and extra indexes, find-links (where the CPU build of torch lies on a machine that
has one), constraint files, the certificate file and timeout, and no cache where pip keeps none. The
index strategy is pip's: the best version from any index or link, not the first index's. The exit
code is uv's; the Makefile installs with pip where this fails.

    .venv/bin/python tests/tools/uv_install.py [uv pip install options and requirements]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SETTING = re.compile(r"^(?P<scope>[^.]*)\.(?P<key>[a-z-]+)='(?P<value>.*)'$")
# pip settings (as `pip config list` names them) -> uv pip install options, a value each
LISTS = {"find-links": "--find-links", "extra-index-url": "--extra-index-url", "constraint": "--constraint"}


def pip_settings() -> dict[str, str]:
    """pip's settings, as ``pip config list`` shows them: files first, then the environment, the last
    one of a key being the one pip uses."""
    shown = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                           check=True).stdout
    settings: dict[str, str] = {}
    for line in shown.splitlines():
        found = SETTING.match(line.strip())
        if found:
            settings[found["key"]] = found["value"]
    return settings


def uv_command(args: list[str], settings: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The uv command line and its environment for ``uv pip install args`` under pip's ``settings``."""
    command = [str(Path(sys.executable).with_name("uv")), "pip", "install", "--python", sys.executable,
               "--index-strategy", "unsafe-best-match"]
    if settings.get("index-url"):
        command += ["--index-url", settings["index-url"]]
    for key, option in LISTS.items():
        for value in settings.get(key, "").split():
            command += [option, value]
    if settings.get("no-cache-dir", "").lower() in ("1", "true", "yes", "on"):
        command.append("--no-cache")
    env = dict(os.environ)
    if settings.get("cert"):
        env["SSL_CERT_FILE"] = settings["cert"]
    if settings.get("default-timeout") or settings.get("timeout"):
        env["UV_HTTP_TIMEOUT"] = settings.get("default-timeout") or settings["timeout"]
    return [*command, *args], env


def main() -> int:
    command, env = uv_command(sys.argv[1:], pip_settings())
    try:
        return subprocess.run(command, env=env).returncode
    except OSError as err:  # no uv beside this interpreter
        print(f"uv_install: {err}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main())
