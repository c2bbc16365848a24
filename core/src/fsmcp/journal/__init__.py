"""The change journal: each call's change recorded so that it can be undone, and the view tools read."""
