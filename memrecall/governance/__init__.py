"""Memory governance (seed 002 §5, §6, §8, §9, §11, §12, §15): pure rules, no I/O.

Who may read and write which memory (:func:`decide` over an :class:`ExecutionContext`),
what is refused at write time (:func:`screen_write`), how a save under an existing key is
classified (:func:`plan_save`), the candidate state machine (:func:`step`) and
the profile projection (:func:`build_profile`). No module here opens a file, a database or
a clock: time is an argument. The store service calls these; see docs/governance.md.
"""

from .candidates import CANDIDATE_TTL as CANDIDATE_TTL
from .candidates import Accept as Accept
from .candidates import AcceptEdits as AcceptEdits
from .candidates import ApplyCandidate as ApplyCandidate
from .candidates import Candidate as Candidate
from .candidates import CandidateAudit as CandidateAudit
from .candidates import CandidateOperation as CandidateOperation
from .candidates import CandidateStatus as CandidateStatus
from .candidates import CandidateStep as CandidateStep
from .candidates import Expire as Expire
from .candidates import ForgetRejection as ForgetRejection
from .candidates import InvalidTransition as InvalidTransition
from .candidates import Purge as Purge
from .candidates import Rebase as Rebase
from .candidates import RecheckConflict as RecheckConflict
from .candidates import Reject as Reject
from .candidates import RememberRejection as RememberRejection
from .candidates import new_candidate as new_candidate
from .candidates import proposal_fingerprint as proposal_fingerprint
from .candidates import scope_key as scope_key
from .candidates import step as step
from .conflicts import ConflictClass as ConflictClass
from .conflicts import SaveAction as SaveAction
from .conflicts import classify as classify
from .conflicts import content_fingerprint as content_fingerprint
from .conflicts import normalise_content as normalise_content
from .conflicts import plan_save as plan_save
from .context import GLOBAL as GLOBAL
from .context import ExecutionContext as ExecutionContext
from .context import MemorySettings as MemorySettings
from .context import Scope as Scope
from .context import ScopeType as ScopeType
from .context import SessionMode as SessionMode
from .context import WorkspaceRoute as WorkspaceRoute
from .context import WorkspaceType as WorkspaceType
from .context import visible_scopes as visible_scopes
from .policy import DEFAULT_POLICY as DEFAULT_POLICY
from .policy import DEFAULT_POLICY_JSON as DEFAULT_POLICY_JSON
from .policy import POLICY_DENIED as POLICY_DENIED
from .policy import AccessRequest as AccessRequest
from .policy import Allowed as Allowed
from .policy import Decision as Decision
from .policy import DenyReason as DenyReason
from .policy import Operation as Operation
from .policy import Outcome as Outcome
from .policy import PolicyDeniedEvent as PolicyDeniedEvent
from .policy import PolicyDocument as PolicyDocument
from .policy import Refusal as Refusal
from .policy import ToolName as ToolName
from .policy import WorkspacePolicy as WorkspacePolicy
from .policy import decide as decide
from .policy import decode_policy as decode_policy
from .policy import policy_denied_event as policy_denied_event
from .profile import Profile as Profile
from .profile import ProfileEntry as ProfileEntry
from .profile import ProjectableMemory as ProjectableMemory
from .profile import build_profile as build_profile
from .profile import projection_changes as projection_changes
from .sensitive import ContentRefusal as ContentRefusal
from .sensitive import SecretFinding as SecretFinding
from .sensitive import SecretKind as SecretKind
from .sensitive import WriteOrigin as WriteOrigin
from .sensitive import find_secrets as find_secrets
from .sensitive import screen_write as screen_write
from .tool_args import TargetRecord as TargetRecord
from .tool_args import ToolArgs as ToolArgs
from .tool_args import access_request as access_request
from .tool_args import parse_tool_arguments as parse_tool_arguments
