"""The host's output helpers that plugins share."""

from fsmcp import number_runs


def test_number_runs_joins_consecutive_numbers():
    assert number_runs([1, 2, 3, 5]) == "1-3, 5"
    assert number_runs([4]) == "4"
    assert number_runs([1, 3, 4, 7, 8, 9]) == "1, 3-4, 7-9"
    assert number_runs([]) == ""
