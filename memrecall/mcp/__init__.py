"""The MCP server: the memory tools for any Model Context Protocol client (docs/mcp.md).

``memrecall.mcp.server`` builds the server (it imports the MCP SDK); ``memrecall.mcp.cli`` is
the ``memrecall mcp`` subcommand, which imports the SDK only when it runs.
"""
