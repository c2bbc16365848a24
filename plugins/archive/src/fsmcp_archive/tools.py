TOOLS = []
