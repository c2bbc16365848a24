from fsmcp import READ_ONLY, Tool, ToolInput


class ListAllowedInput(ToolInput):
    pass


def list_allowed_directories(args, ctx):
    return "\n".join(r.describe() for r in ctx.fs.roots.roots)


TOOLS = [
    Tool("list_allowed_directories", "List the directories this server may access, each marked read-write or read-only.", ListAllowedInput, list_allowed_directories, READ_ONLY),
]
