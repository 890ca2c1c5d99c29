"""The recording proxy in front of the real servers leaves the server's request when its client
leaves: llama-server stops generating an answer whose connection closed (measured 2026-11-28:
``cancel task`` 0.3 s after), and a proxy that kept the connection open made it generate on,
up to its context, beside every later request of the run."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.fakes._script import hang, text
from tests.fakes.openai_server import FakeOpenAIServer
from tests.real_model._proxy import RecordingProxy


def test_a_client_that_gives_up_closes_the_request_upstream_too() -> None:
    with FakeOpenAIServer([hang()]) as upstream, RecordingProxy(upstream.origin) as proxy:
        request = urllib.request.Request(
            f"{proxy.base_url}/chat/completions",
            data=json.dumps({"model": "fake-model", "messages": [], "stream": False}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(TimeoutError):
            urllib.request.urlopen(request, timeout=1)
        assert upstream.wait_for_disconnect(timeout=5)


def test_an_answer_is_passed_on_whole_and_its_request_recorded() -> None:
    with FakeOpenAIServer([text("Hello there", chunks=3)]) as upstream:
        with RecordingProxy(upstream.origin) as proxy:
            body = {"model": "fake-model", "messages": [], "stream": True}
            request = urllib.request.Request(
                f"{proxy.base_url}/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                streamed = answer.read().decode()
        assert proxy.bodies == [body]
    assert streamed.count("data: ") == 6 and streamed.endswith("data: [DONE]\n\n")
    assert upstream.disconnects == 0
