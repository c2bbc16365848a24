"""Helpers for the read plugin's tests: the read plugin alone under fsmcp.testing's fixtures
(``root``, ``call``: one in-process MCP client per call), real files."""

from __future__ import annotations

import struct
import zlib

import pytest
from mcp import types

import fsmcp_read.hooks


@pytest.fixture
def fsmcp_plugins():
    return [("read", fsmcp_read.hooks)]


@pytest.fixture
def failure():
    """The error code of a result that must be an error."""

    def failure(result: types.CallToolResult) -> str:
        assert result.is_error, f"expected an error, got {result.content!r}"
        return result.content[0].text.split(":", 1)[0]

    return failure


@pytest.fixture
def texts():
    """The text parts of a result that must not be an error."""

    def texts(result: types.CallToolResult) -> list[str]:
        assert not result.is_error, result.content[0].text
        return [block.text for block in result.content if isinstance(block, types.TextContent)]

    return texts


@pytest.fixture
def png() -> bytes:
    """A real 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
