"""One span and its duration histogram, for either side: attributes, the error a reply or an
exception means, and the end (the `Operation` client and server spans share)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .attributes import (
    ERROR_TYPE,
    METHOD,
    OPERATION,
    RESULT,
    SPAN_ONLY,
    STATUS_CODE,
    TOOL_ERROR,
    classify_error,
)
from .otel import Otel, capture_content
from .span_values import ATTRIBUTE_MAX, SPAN_NAME_MAX, captured, clip, clip_attributes

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span


class Operation:
    """One span (when tracing) and one duration measurement (when metering)."""

    __slots__ = ("attributes", "context", "error", "histogram", "otel", "span", "start")

    def __init__(
        self,
        otel: Otel,
        kind: Any,
        name: str,
        attributes: dict[str, Any],
        histogram: Any,
        parent: Context | None,
        links: list[Any] | None = None,
    ) -> None:
        self.otel = otel
        self.attributes = attributes
        self.histogram = histogram
        self.error: tuple[str, str | None, str | None] | None = None
        self.start = time.perf_counter()
        clip_attributes(attributes)  # a peer's text, kept until the exporter takes the span
        tracer = otel.tracer
        if tracer is not None:
            if len(name) > SPAN_NAME_MAX:
                name = clip(name, SPAN_NAME_MAX)
            self.span: Span | None = tracer.start_span(
                name, context=parent, kind=kind, attributes=attributes, links=links
            )
            self.context: Context | None = otel.trace.set_span_in_context(self.span, parent)
        else:
            self.span = None
            self.context = parent

    def set(self, key: str, value: Any) -> None:
        if type(value) is str:
            value = clip(value, ATTRIBUTE_MAX)
        self.attributes[key] = value
        if self.span is not None:
            self.span.set_attribute(key, value)

    def fail(self, error_type: str, code: str | None = None, message: str | None = None) -> None:
        # The peer's words (an error code or message it sent): cut like any attribute.
        self.error = (
            clip(error_type, ATTRIBUTE_MAX),
            None if code is None else clip(code, ATTRIBUTE_MAX),
            None if message is None else clip(message, ATTRIBUTE_MAX),
        )

    def failed(self, exc: BaseException) -> None:
        error_type, code = classify_error(exc)
        self.fail(error_type, code, type(exc).__name__)

    def settle(self, response: Any, exc: BaseException | None) -> None:
        """The outcome of a request this span covers: the exception it ended with, else its response."""
        if exc is not None:
            self.failed(exc)
        elif response is not None:
            self.reply(response)

    def end(self) -> None:
        attributes = self.attributes
        error = self.error
        span = self.span
        if error is not None:
            attributes[ERROR_TYPE] = error[0]
            if error[1] is not None:
                attributes[STATUS_CODE] = error[1]
            if span is not None:
                span.set_attribute(ERROR_TYPE, error[0])
                if error[1] is not None:
                    span.set_attribute(STATUS_CODE, error[1])
                span.set_status(self.otel.trace.Status(self.otel.trace.StatusCode.ERROR, error[2]))
        if span is not None:
            span.end()
        if self.histogram is not None:
            self.histogram.record(
                time.perf_counter() - self.start,
                {k: v for k, v in attributes.items() if k not in SPAN_ONLY},
            )

    def reply(self, response: Any) -> bool:
        """Note a JSON-RPC response; True when it ends the operation (False: an `input_required`
        round, a task whose polls follow, or an error a client may still retry)."""
        if type(response) is not dict:
            return True
        error = response.get("error")
        if type(error) is dict:
            code = error.get("code")
            text = str(code)
            message = error.get("message")
            self.fail(text, text, message if type(message) is str else None)
            return False
        result = response.get("result")
        if type(result) is not dict:
            return True
        if result.get("resultType") in ("input_required", "task") or type(result.get("task")) is dict:
            # A round, or a task the client polls next (2025-11-25: `{"task": {...}}`): the
            # operation goes on, and a CreateTaskResult is never captured (it holds the task id,
            # a bearer secret).
            self.error = None
            return False
        if result.get("isError") is True and self.attributes.get(METHOD) == "tools/call":
            self.fail(TOOL_ERROR)
        else:
            self.error = None
        if self.span is not None and capture_content() and OPERATION in self.attributes:
            self.span.set_attribute(RESULT, captured({k: v for k, v in result.items() if k != "_meta"}))
        return True
