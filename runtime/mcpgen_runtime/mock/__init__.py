"""`mcpgen mock`: a spec's tools served by the runtime's real server with made-up answers.

    server = MockServer(load_spec_file("specs/weather.json"), seed=7, responses="responses.yaml")
    server.run_http("127.0.0.1", 8000)          # or run_stdio(); server.calls lists what was called

Answers are valid against each tool's `outputSchema` and the same for the same seed and
arguments (values/); `--responses` files add canned answers, errors,
elicitation rounds and faults (responses.py). `running_mock` (harness.py) starts one for a
test; the pytest plugin (`mcpgen_runtime.pytest_plugin`) wraps it in fixtures.

Layer: above `server/` and `protocol/`; never imports `client/` or `transport/` (pyproject.toml).
"""

from .command import load_spec_file, serve_mock
from .harness import RunningMock, running_mock
from .responses import ResponsesError, ToolResponses, load_responses, parse_responses
from .server import MockCall, MockServer, read_record
from .values import MockDependencyError, ValueGenerationError, ValueMaker

__all__ = [
    "MockCall",
    "MockDependencyError",
    "MockServer",
    "ResponsesError",
    "RunningMock",
    "ToolResponses",
    "ValueGenerationError",
    "ValueMaker",
    "load_responses",
    "load_spec_file",
    "parse_responses",
    "read_record",
    "running_mock",
    "serve_mock",
]
