"""The demo's scripted OpenAI-compatible model: the real openai client against it on loopback,
and its reading of browser-use's page state."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from sandbox.demo.browser_use_actions import ScriptError, browser_use_actions, find_index
from sandbox.demo.scripted_model import ScriptedServer

STATE = """<browser_state>
Interactive elements:
[26]<a />
\tRead the reviews
[33]<label />
\tRating
\t|SHADOW(open)|*[10]<select name=rating expanded=false />
[48]<label />
\tTitle
\t|SHADOW(open)|[11]<input name=title value= />
|SHADOW(open)|[35]<textarea id=answer required=true />
[60]<input type=radio name=list value=daily-briefing checked=true />
[61]<input type=radio name=list value=weekly-digest />
[57]<button type=submit />
\tPost review
</browser_state>"""
PROMPT_EXAMPLE = "Format: [35]<input type=text placeholder=Enter name /> [38]<button />\n\tSubmit\n"


@pytest.mark.parametrize(
    ("label", "index"),
    [("title", 11), ("rating", 10), ("Post review", 57), ("Read the reviews", 26)],
)
def test_an_element_is_found_by_what_a_user_sees(label: str, index: int) -> None:
    assert find_index(PROMPT_EXAMPLE + STATE, label) == index


def test_the_prompts_examples_are_not_the_page() -> None:
    with pytest.raises(ScriptError, match="Enter name"):
        find_index(PROMPT_EXAMPLE + STATE, "Enter name")


def test_a_form_is_filled_by_field_name_and_submitted() -> None:
    fill = {"rating": "4", "title": "Great", "answer": "42", "list": "weekly-digest", "x": "y"}
    assert browser_use_actions({"fill": fill}, STATE) == [
        {"select_dropdown": {"index": 10, "text": "4"}},
        {"input": {"index": 11, "text": "Great", "clear": True}},
        {"input": {"index": 35, "text": "42", "clear": True}},  # by id: no name shown
        {"click": {"index": 61}},  # the radio button with that value; a hidden field is skipped
    ]
    assert browser_use_actions({"submit": True}, STATE) == [{"click": {"index": 57}}]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    steps = [{"navigate": "https://x.test/"}, {"click": "Post review"}, {"done": "ok"}]
    srv = ScriptedServer(steps).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_the_real_client_gets_one_step_per_call_and_the_usage_it_reports(server) -> None:
    client = openai.OpenAI(base_url=server.url, api_key="k", max_retries=0)
    # the page is read from the newest message that has one, a nudge after it or not
    messages = [{"role": "user", "content": STATE}, {"role": "user", "content": "Hurry up."}]
    first = client.chat.completions.create(model="m", messages=messages)
    assert json.loads(first.choices[0].message.content)["action"] == [
        {"navigate": {"url": "https://x.test/", "new_tab": False}}
    ]
    stream = client.chat.completions.create(
        model="m", messages=messages, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert json.loads(content)["action"] == [{"click": {"index": 57}}]
    streamed = chunks[-1].usage
    assert streamed is not None and not chunks[-1].choices
    # the usage the proxy counts: the prompt's, half of it cached after the first call
    assert first.usage is not None and first.usage.prompt_tokens == streamed.prompt_tokens > 0
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert streamed.prompt_tokens_details.cached_tokens == streamed.prompt_tokens // 2
    assert streamed.completion_tokens > 0
    assert not server.script.errors
