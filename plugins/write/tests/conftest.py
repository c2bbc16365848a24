"""The write plugin alone under fsmcp.testing's fixtures (``root``, ``outside``, ``server``)."""

from __future__ import annotations

import fsmcp_write.hooks
import pytest
from fsmcp.testing import tree_of


@pytest.fixture
def fsmcp_plugins():
    return [("write", fsmcp_write.hooks)]


@pytest.fixture(name="tree_of")
def tree_of_fixture():
    return tree_of
