"""The memory store: user-owned, scoped, revisioned, forgettable memory (seed 002; docs/store.md).

Use :class:`MemoryService` (async, trio) over a :class:`Store` backend; the embedded
default is :class:`SQLiteStore`.
"""

from .backend import KEEP as KEEP
from .backend import ContentChange as ContentChange
from .backend import ForgetResult as ForgetResult
from .backend import Keep as Keep
from .backend import NewMemory as NewMemory
from .backend import SaveOutcome as SaveOutcome
from .backend import Store as Store
from .budget import count_tokens as count_tokens
from .cache import CacheKey as CacheKey
from .cache import QueryCache as QueryCache
from .keys import normalize_key as normalize_key
from .model import AuditEvent as AuditEvent
from .model import AuditType as AuditType
from .model import ChangedVia as ChangedVia
from .model import ChangeType as ChangeType
from .model import InvalidInput as InvalidInput
from .model import KeyConflict as KeyConflict
from .model import MemoryRecord as MemoryRecord
from .model import MemoryScope as MemoryScope
from .model import MemoryVersion as MemoryVersion
from .model import NotFound as NotFound
from .model import RevisionConflict as RevisionConflict
from .model import ScopeType as ScopeType
from .model import SourceType as SourceType
from .model import Status as Status
from .model import StoreError as StoreError
from .model import Tombstone as Tombstone
from .model import WorkspaceType as WorkspaceType
from .model import visible_scopes as visible_scopes
from .retrieval import RETRIEVAL_VERSION as RETRIEVAL_VERSION
from .retrieval import Budget as Budget
from .retrieval import RetrievalView as RetrievalView
from .retrieval import SearchHit as SearchHit
from .service import MemoryService as MemoryService
from .service import SearchResult as SearchResult
from .sqlite import SQLiteStore as SQLiteStore
from .sqlite import default_db_path as default_db_path
