"""An agent loop: an OpenAI model answers a question with the weather server's tools, each call it
makes run through the typed client generated for that server.

    pip install openai                                     # beside mcpgen-runtime and weather_client
    python -m weather_server --http --port 8000 &          # or any server weather_client was made for
    OPENAI_API_KEY=... python examples/agent_loop.py "Do I need an umbrella in Oslo today?"

`client.tool_specs("openai")` declares the client's tools as the Responses API takes them (strict:
closed objects, every property required, an optional one nullable); `specs.call` runs a call the
model makes: the name mapped back, each `null` that stands for "not sent" taken out, the arguments
checked against the tool's schema and sent. A call the model gets wrong is answered with the reason,
so it can try again. WEATHER_URL and OPENAI_MODEL change the server and the model.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from openai import OpenAI
from weather_client import Client

URL = os.environ.get("WEATHER_URL", "http://127.0.0.1:8000/mcp")
MODEL = os.environ.get("OPENAI_MODEL", "gpt-5-mini")


def answer(question: str, *, max_turns: int = 10) -> str:
    llm = OpenAI()  # reads OPENAI_API_KEY (and OPENAI_BASE_URL)
    with Client(URL) as weather:
        specs = weather.tool_specs("openai")
        conversation: list[Any] = [{"role": "user", "content": question}]
        for _ in range(max_turns):
            response = llm.responses.create(model=MODEL, input=conversation, tools=specs.tools)
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                return response.output_text
            conversation += response.output
            for call in calls:
                reply = specs.call(call.name, call.arguments, call_id=call.call_id)
                conversation.append(reply.message())
    raise RuntimeError(f"no answer after {max_turns} turns")


if __name__ == "__main__":
    print(answer(" ".join(sys.argv[1:]) or "What is the weather in Oslo?"))
