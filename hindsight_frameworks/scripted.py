"""A scripted Agents SDK `Model`: the stub beside the real one, for tests and the examples (no LLM, no key).

Each call to the model takes the next step of its script; a step is a function of the input items the
Runner sent (so a script can read what the tools returned) that gives the output: `call(name, **args)`
(a function call) or `say(text)` (the answer). `inputs` keeps what each call was sent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from agents import Model, ModelResponse, Usage
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

Step = Callable[[list[TResponseInputItem]], TResponseOutputItem]


def call(name: str, **arguments: Any) -> Step:
    def step(_: list[TResponseInputItem]) -> TResponseOutputItem:
        return ResponseFunctionToolCall(
            id=f"fc_{uuid.uuid4().hex[:12]}",
            call_id=f"call_{uuid.uuid4().hex[:12]}",
            name=name,
            arguments=json.dumps(arguments),
            type="function_call",
            status="completed",
        )

    return step


def say(text: str | Callable[[list[TResponseInputItem]], str]) -> Step:
    def step(items: list[TResponseInputItem]) -> TResponseOutputItem:
        content = text(items) if callable(text) else text
        return ResponseOutputMessage(
            id=f"msg_{uuid.uuid4().hex[:12]}",
            role="assistant",
            status="completed",
            type="message",
            content=[ResponseOutputText(text=content, type="output_text", annotations=[])],
        )

    return step


def last_tool_output(items: list[TResponseInputItem]) -> str:
    """The output of the newest function call among the items ("" if none)."""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            return str(item.get("output", ""))
    return ""


class ScriptedModel(Model):
    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.inputs: list[list[TResponseInputItem]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        items: list[TResponseInputItem] = (
            [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        )
        self.inputs.append(items)
        if not self.steps:
            raise AssertionError("ScriptedModel: the script has no step left")
        output = self.steps.pop(0)(items)
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("ScriptedModel does not stream: use Runner.run")
