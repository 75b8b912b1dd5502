"""trio actors: the engine, session and plan actors, and the selector contract."""

from .engine import Engine as Engine
from .engine import EngineStatistics as EngineStatistics
from .engine import open_engine as open_engine
from .plan import MemoryBlock as MemoryBlock
from .plan import PlanObserver as PlanObserver
from .selector import SELECTOR_INSTRUCTIONS as SELECTOR_INSTRUCTIONS
from .selector import Selector as Selector
from .selector import SelectorRequest as SelectorRequest
from .selector import SimulatedSelector as SimulatedSelector
from .session import Session as Session
from .session import SessionBusyError as SessionBusyError
from .session import SessionClosedError as SessionClosedError
from .session import SessionMisuseError as SessionMisuseError
