"""Every grammar over hostile text: no exception, and every definition's lines inside the file."""

from __future__ import annotations

import os

from fsmcp_outline.grammars import GRAMMARS, tree_sitter_symbols
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# the pieces definitions are made of, so that random text reaches the walk's every branch
TOKENS = [
    "{", "}", "(", ")", "[", "]", "<", ">", ";", ":", "::", ".", ",", "=", "=>", "\\", "\n", " ", "*", "&", "#",
    "class", "def", "end", "fn", "func", "function", "impl", "struct", "enum", "trait", "mod", "module",
    "namespace", "interface", "object", "companion", "template", "typedef", "type", "const", "var", "export",
    "default", "return", "self", "@x", "#[a]", "#ifdef X\n", "#endif\n", "#define M(a) a\n", "macro_rules!",
    "forwardRef", "memo", "A", "b", "<?php", "}\n", "do", "then", "fi",
]  # fmt: skip
_DEEP = int(os.environ.get("FSMCP_DEEP_PROPERTIES", "0"))


@settings(max_examples=_DEEP or 300, derandomize=not _DEEP, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(GRAMMARS)), st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=200))
def test_any_text_outlines_within_its_lines(suffix, tokens):
    source = "".join(tokens).encode("utf-8", "surrogatepass")
    lines = source.count(b"\n") + 1
    for symbol in tree_sitter_symbols(GRAMMARS[suffix], source):
        assert 1 <= symbol.start <= symbol.end <= lines, (symbol, source)
        assert symbol.qualname and all(symbol.qualname) and symbol.depth >= 1, (symbol, source)
        assert "\n" not in symbol.signature and len(symbol.signature) <= 160, symbol
