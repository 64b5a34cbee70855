"""MCP tool clients: `Client` (blocking) and `AsyncClient` (asyncio), which generated clients subclass.

- `core.py`: `ClientCore`, every flow without I/O (requests, caching, pagination, MRTR, results);
  its member `legacy` (`LegacyFlows`: modern or legacy, the legacy handshake, session) is `legacy_flows.py`,
  its steps `steps.py`; the client's half of input-required results is `input_responses.py`
- `arguments.py`: generated-method arguments → the wire `arguments` object (`UNSET` left out)
- `legacy_listen.py`: what `listen()` delivers from a legacy server
- `_async/client.py`: `AsyncClient`, the driver written once; `_sync/client.py`: `Client`, generated from it
- `_async/surface_methods.py`: `AsyncClient`'s methods for resources, prompts and completions
  (a base class; `_sync/surface_methods.py` for `Client`), each a flow of `surface_flows.py`
- `_async/listen.py`: `AsyncSubscription` (`listen()`); `_sync/listen.py`: `Subscription`
- `_async/tasks.py`: `AsyncTaskHandle[T]` (`start.<tool>` / `resume.<tool>` in generated clients),
  `AsyncTasks` (`client.tasks`); `_sync/tasks.py`: `TaskHandle[T]`, `Tasks`; the flows are `task_flows.py`
- `_async/skills.py`: `AsyncLoadedSkill` (`load_skill`: a skill's verified SKILL.md, its other files read
  and verified when asked); `_sync/skills.py`: `LoadedSkill`; the flows are `skill_flows.py`
- `_async/tool_specs.py`: `AsyncToolSpecs` (`client.tool_specs(provider)`: the tools in a model
  provider's request shape, and a model's tool call run through the client); `_sync/tool_specs.py`:
  `ToolSpecs`; what they share (declarations, names mapped back, the reply) is `tool_specs.py`
- `common.py`: set-up both drivers share, and `SyncClientBase` / `AsyncClientBase`, the little that differs

The input-required wire types a client's callbacks see and answer with (protocol/input_messages.py)
are exported here too.
"""

from ..cache import StaleCacheWarning
from ..protocol.input_messages import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
    Root,
    SamplingMessage,
)
from ..protocol.tasks import TaskState
from ._async.client import AsyncClient
from ._async.listen import AsyncSubscription
from ._async.skills import AsyncLoadedSkill
from ._async.tasks import AsyncTaskHandle, AsyncTasks, AsyncTaskUpdates
from ._async.tool_specs import AsyncToolSpecs
from ._sync.client import Client
from ._sync.listen import Subscription
from ._sync.skills import LoadedSkill
from ._sync.tasks import TaskHandle, Tasks, TaskUpdates
from ._sync.tool_specs import ToolSpecs
from .core import ClientCore, Flow, Notify, Outgoing, Step, ToolsPage
from .options import declared_capabilities
from .tool_checks import InvalidToolWarning
from .tool_specs import ModelCallError, ToolReply, Unsendable

__all__ = [
    "AsyncClient",
    "AsyncLoadedSkill",
    "AsyncSubscription",
    "AsyncTaskHandle",
    "AsyncTaskUpdates",
    "AsyncTasks",
    "AsyncToolSpecs",
    "Client",
    "ClientCore",
    "CreateMessageRequest",
    "CreateMessageResult",
    "ElicitRequest",
    "ElicitResult",
    "Flow",
    "InvalidToolWarning",
    "ListRootsRequest",
    "ListRootsResult",
    "LoadedSkill",
    "ModelCallError",
    "Notify",
    "Outgoing",
    "Root",
    "SamplingMessage",
    "StaleCacheWarning",
    "Step",
    "Subscription",
    "TaskHandle",
    "TaskState",
    "TaskUpdates",
    "Tasks",
    "ToolReply",
    "ToolSpecs",
    "ToolsPage",
    "Unsendable",
    "declared_capabilities",
]
