"""The edit plugin alone under fsmcp.testing's fixtures (``root``, ``call``)."""

import pytest

from fsmcp_edit import hooks


@pytest.fixture
def fsmcp_plugins():
    return [("edit", hooks)]
