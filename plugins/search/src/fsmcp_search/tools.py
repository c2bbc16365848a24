"""The search tools as the host registers them."""

from __future__ import annotations

from fsmcp import READ_ONLY, Tool

from .models import GlobSearchInput, GrepFilesInput, SearchFilesInput

TOOLS = [
    Tool(
        name="search_files",
        description="Files and directories whose name contains a text, at any depth.",
        input_model=SearchFilesInput,
        function="fsmcp_search.search_files:search_files",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
    Tool(
        name="glob_search",
        description="Files (not directories) matching globs.",
        input_model=GlobSearchInput,
        function="fsmcp_search.glob_search:glob_search",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
    Tool(
        name="grep_files",
        description="Lines of files matching a regex, like grep -rn; binary files skipped.",
        input_model=GrepFilesInput,
        function="fsmcp_search.grep_files:grep_files",
        annotations=READ_ONLY,
        starts_programs=True,
        long=True,
    ),
]
