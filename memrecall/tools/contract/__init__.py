"""The seed-003 tool contract as pure functions over a record snapshot.

Nothing here reads a clock, a file or a database: a store integration builds a
:class:`StoreView`, calls one of the functions and carries out what it returns.
"""

from .constants import ConfigError as ConfigError
from .constants import ScoreConfig as ScoreConfig
from .constants import load_score_config as load_score_config
from .descriptions import TOOL_DESCRIPTIONS as TOOL_DESCRIPTIONS
from .descriptions import reference_markdown as reference_markdown
from .expand import ExpandedRecord as ExpandedRecord
from .expand import ExpandResult as ExpandResult
from .expand import expand as expand
from .instructions import MEMORY_INSTRUCTIONS as MEMORY_INSTRUCTIONS
from .prune import PrunePlan as PrunePlan
from .prune import plan_prune as plan_prune
from .recall import RecallResult as RecallResult
from .recall import RecallRow as RecallRow
from .recall import recall as recall
from .records import MemoryRecord as MemoryRecord
from .records import StoreStamp as StoreStamp
from .records import StoreView as StoreView
from .records import record_bytes as record_bytes
from .scoring import Match as Match
from .scoring import judge_match as judge_match
from .validate import Refusal as Refusal
from .validate import RememberResult as RememberResult
from .validate import ValidRemember as ValidRemember
from .validate import check_gates as check_gates
from .validate import validate_remember as validate_remember
