"""The memory store: user-owned, scoped, revisioned, forgettable memory (seed 002; docs/store.md).

The faces, from the inside out:

* :class:`Store` (``backend``): the synchronous, dialect-neutral protocol a database
  implements, one transaction per method; :class:`SQLiteStore` is the embedded default,
  :class:`~memrecall.store.postgres.PostgresStore` the shared one (:func:`open_store`
  opens either from a ``--db`` value).
* :class:`MemoryService` (``service``): the async (trio) API every caller uses: checks
  input, runs the backend in worker threads, searches through an incremental
  :class:`LiveView` and a :class:`QueryCache`, keeps the profile projection current, and
  carries out the candidate state machine (``propose``/``accept``/``reject``/``expire``;
  results :class:`ProposeOutcome`, :class:`AcceptOutcome`).
* :class:`GovernedMemory` (``governed``): every call through :mod:`memrecall.governance`
  (policy, secret screen, denials and reads audited).
* :class:`StoreSource` (``source``): recall from the store, a document source for
  ``open_engine``.
"""

from .backend import KEEP as KEEP
from .backend import ContentChange as ContentChange
from .backend import ForgetResult as ForgetResult
from .backend import Keep as Keep
from .backend import NewMemory as NewMemory
from .backend import Rejection as Rejection
from .backend import SaveOutcome as SaveOutcome
from .backend import Store as Store
from .backend import StoreChanges as StoreChanges
from .budget import count_tokens as count_tokens
from .cache import CacheKey as CacheKey
from .cache import QueryCache as QueryCache
from .candidates import CANDIDATE_CREATED as CANDIDATE_CREATED
from .candidates import CANDIDATE_REBASED as CANDIDATE_REBASED
from .candidates import AcceptOutcome as AcceptOutcome
from .candidates import ProposeOutcome as ProposeOutcome
from .contract_fields import ContractFields as ContractFields
from .governed import MEMORY_READ as MEMORY_READ
from .governed import MEMORY_SEARCH as MEMORY_SEARCH
from .governed import GovernedMemory as GovernedMemory
from .governed import SaveKind as SaveKind
from .governed import SaveResult as SaveResult
from .index import IncrementalIndex as IncrementalIndex
from .keys import normalize_key as normalize_key
from .model import AuditEvent as AuditEvent
from .model import AuditType as AuditType
from .model import CandidateConflict as CandidateConflict
from .model import ChangedVia as ChangedVia
from .model import ChangeType as ChangeType
from .model import GovernanceEvent as GovernanceEvent
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
from .postgres import is_postgres_dsn as is_postgres_dsn
from .postgres import open_store as open_store
from .projection import PROJECTION_CREATED as PROJECTION_CREATED
from .projection import PROJECTION_REMOVED as PROJECTION_REMOVED
from .projection import Projector as Projector
from .projection import rebuild_projection as rebuild_projection
from .retrieval import RETRIEVAL_VERSION as RETRIEVAL_VERSION
from .retrieval import Budget as Budget
from .retrieval import LiveView as LiveView
from .retrieval import RetrievalView as RetrievalView
from .retrieval import SearchHit as SearchHit
from .service import MemoryService as MemoryService
from .service import SearchResult as SearchResult
from .service import new_memory_id as new_memory_id
from .service import utc_now as utc_now
from .source import StoreRanker as StoreRanker
from .source import StoreSource as StoreSource
from .source import record_document as record_document
from .sqlite import SQLiteStore as SQLiteStore
from .sqlite import default_db_path as default_db_path
