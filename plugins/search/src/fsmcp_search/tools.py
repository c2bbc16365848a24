"""The search tools as the host registers them."""

from __future__ import annotations

from fsmcp import READ_ONLY, Tool

from .models import GlobSearchInput, GrepFilesInput, SearchFilesInput

_IGNORES = ".gitignore rules (nested ones too) are respected and .git is skipped unless includeIgnored is true; symbolic links are not followed."

TOOLS = [
    Tool(
        name="search_files",
        title="Find files by name",
        description="Find files and directories whose name contains a literal text, case-insensitively, anywhere under a directory. "
        "Output: one absolute path per line, sorted, or (no matches found). "
        "To match a glob use glob_search; to search file contents use grep_files. " + _IGNORES,
        input_model=SearchFilesInput,
        function="fsmcp_search.names:search_files",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
    Tool(
        name="glob_search",
        title="Find files by glob",
        description="Find files (not directories) matching globs: ** any depth, * and ? within a name, {a,b}, [abc]. "
        "A relative glob matches the path relative to directory: *.py its own files, **/*.py any depth, src/**/*.ts; an absolute glob is used as given. "
        "Output: one absolute path per line, sorted, at most max (default 1000) with a notice past it, or (no matches found). "
        "To search file contents use grep_files. " + _IGNORES,
        input_model=GlobSearchInput,
        function="fsmcp_search.names:glob_search",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
    Tool(
        name="grep_files",
        title="Search file contents",
        description="Search file contents with an ECMAScript (JavaScript) regex, line by line, like grep -rn. "
        "Say where with directory, globs, or both: relative globs are anchored to directory (or to the workspace when it is omitted), "
        'absolute globs are used as given; e.g. {"regex": "TODO", "directory": "/src/app", "globs": ["**/*.swift"]}. '
        "Output: path:line:text for matches, path-line-text for context lines (contextLines), -- between groups, "
        "then [N matches]; a notice first when maxResults (default 500) or the output budget cut it short. "
        "Binary files are skipped; lookaround and backreferences are refused (INVALID_PARAMS). "
        "To find files by name use search_files or glob_search. " + _IGNORES,
        input_model=GrepFilesInput,
        function="fsmcp_search.grep:grep_files",
        annotations=READ_ONLY,
        starts_programs=True,
    ),
]
