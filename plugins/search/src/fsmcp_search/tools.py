"""The search tools as the host registers them."""

from __future__ import annotations

from fsmcp import READ_ONLY, Tool

from .models import GlobSearchInput, GrepFilesInput, SearchFilesInput

_SKIPS = "Links are not followed."

TOOLS = [
    Tool(
        name="search_files",
        title="Find files by name",
        description="Files and directories whose name contains a text, at any depth. "
        "By glob: glob_search; by content: grep_files. " + _SKIPS,
        input_model=SearchFilesInput,
        function="fsmcp_search.names:search_files",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
    Tool(
        name="glob_search",
        title="Find files by glob",
        description="Files (not directories) matching globs. By content: grep_files. " + _SKIPS,
        input_model=GlobSearchInput,
        function="fsmcp_search.names:glob_search",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
    Tool(
        name="grep_files",
        title="Search file contents",
        description="Lines of files matching a regex, like grep -rn. Binary files are skipped. " + _SKIPS,
        input_model=GrepFilesInput,
        function="fsmcp_search.grep:grep_files",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
]
