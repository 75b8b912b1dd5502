"""Ready-made selectors: who picks the best memories among the candidates.

:class:`OpenAICompatibleSelector` asks any chat-completions endpoint. The
selector contract (:class:`~memrecall.actors.selector.Selector`, the request,
the typed errors) lives in :mod:`memrecall.actors.selector`; anything with an
``async def select(request)`` can be a selector.
"""

from .openai import OpenAICompatibleSelector as OpenAICompatibleSelector

__all__ = ["OpenAICompatibleSelector"]
