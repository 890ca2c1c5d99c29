"""The agent the test-case benchmarks run: one tool, N cases, M providers on one model server.

Kept apart from the benchmarks so importing it loads no runtime module (the studio benchmark
measures the runtime's first import as the studio pays it).
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["PROVIDERS", "write_agent"]

PROVIDERS = [("openai", "OPENAI"), ("vllm", "VLLM"), ("litellm", "LITELLM"), ("ollama", "OLLAMA")]


def write_agent(directory: Path, base_url: str, cases: int, models: int) -> Path:
    """An agent with one tool and ``cases`` test cases (each expects its city in the answer),
    ``models`` providers on ``base_url``."""
    tests = [
        {
            "name": f"case {n}",
            "arguments": {"city": f"City {n}"},
            "expect": {"contains": [f"City {n}"]},
        }
        for n in range(cases)
    ]
    data = {
        "metadata": {
            "name": "Bench",
            "tools": [
                {
                    "name": "ask",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                    "prompt": "Tell me about {city}.",
                    "tests": tests,
                }
            ],
        },
        "settings": {"model": "openai:bench"},
        "providers": {
            pid: {f"{prefix}_BASE_URL": base_url, f"{prefix}_API_KEY": "sk-bench"}
            for pid, prefix in PROVIDERS[:models]
        },
    }
    path = directory / "bench.agent.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
