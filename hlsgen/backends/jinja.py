"""The Jinja environments the backends render with: one per template folder and process, with
StrictUndefined (a missing value is an error, not an empty string) and the compiled templates
kept on disk between runs (jinja2's bytecode cache, keyed by each template's source), so that
a build does not compile its templates again (demo_cnn on the Ultra96: 2.05 instead of 2.25
CPU s, `/usr/bin/time hlsgen build`, four runs each, before ml_dtypes was pinned).
HLSGEN_CACHE_DIR chooses the cache's folder (default: $XDG_CACHE_HOME or ~/.cache, then
hlsgen/jinja2); where it cannot be created, templates are compiled every time."""
from __future__ import annotations

import functools
import os
from pathlib import Path


def _bytecode_cache():
    import jinja2
    root = os.environ.get("HLSGEN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "hlsgen")
    path = Path(root) / "jinja2"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(path)) if os.access(path, os.W_OK) else None


@functools.lru_cache(maxsize=None)
def environment(folder: str, **options):
    """The environment for the templates in `folder` (options: jinja2.Environment's, such as
    trim_blocks)."""
    import jinja2
    return jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, bytecode_cache=_bytecode_cache(), **options)
