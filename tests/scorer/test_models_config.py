"""The judge entry: models.yaml (reference format, ${ENV}), the default, call parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.judge import call_params
from scorer.judge.client import THINKING_TOKENS, retry_after
from scorer.judge.providers import PROVIDERS, ChatCall, Provider, provider_for, register
from scorer.models_yaml import ConfigError, JudgeConfig, default_judge, resolve_judge
from scorer.preflight import PROMPT as PREFLIGHT_PROMPT
from scorer.preflight import judge_endpoint

YAML = """\
# the reference's models.example.yaml shape: an agent entry and the judge
qwen3.5-397b-a17b:
  api_key: "sk-or-v1-agent"
  base_url: https://openrouter.ai/api/v1
  api_type: openai-completions
  thinking_level: medium
  some_agent_only_key: 3        # not ours to validate: the judge never reads this entry
deepseek-v4-pro:
  api_key: "${MY_DEEPSEEK_KEY}"
  base_url: https://api.deepseek.com
  api_type: openai-completions
rotating:
  api_keys:
    - "${KEY_A}"
    - "key-b"
  base_url: https://api.openai.com/v1
  api_type: openai-responses
  thinking_level: low
  max_tokens: 2000
gemini:
  api_key: g
  base_url: https://generativelanguage.googleapis.com/v1beta
  api_type: google-generative-ai
claude:
  api_key: a
  base_url: https://api.anthropic.com
  api_type: anthropic-messages
  thinking_level: medium
bad-key:
  api_key: x
  base_url: http://127.0.0.1:9/v1
  api_type: openai-completions
  temprature: 0
bad-type:
  api_key: x
  base_url: http://127.0.0.1:9/v1
  api_type: bedrock-converse
no-key:
  base_url: http://127.0.0.1:9/v1
  api_type: openai-completions
bad-url:
  api_key: x
  base_url: not-a-url
  api_type: openai-completions
"""


@pytest.fixture
def yaml_file(tmp_path: Path) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(YAML)
    return path


def test_entry_with_env_expansion(yaml_file: Path) -> None:
    cfg = resolve_judge("deepseek-v4-pro", yaml_file, {"MY_DEEPSEEK_KEY": "sk-from-env"})
    assert cfg.api_keys == ("sk-from-env",)
    assert cfg.provider == "deepseek" and cfg.endpoint == "chat" and cfg.temperature == 0
    assert cfg.env_vars == ("MY_DEEPSEEK_KEY",)
    assert "sk-from-env" not in repr(cfg)


def test_api_keys_list_and_responses_endpoint(yaml_file: Path) -> None:
    cfg = resolve_judge("rotating", yaml_file, {"KEY_A": "key-a"})
    assert cfg.api_keys == ("key-a", "key-b")
    assert cfg.endpoint == "responses" and cfg.provider == "openai" and cfg.max_tokens == 2000


def test_gemini_and_anthropic_go_to_their_openai_compatible_endpoints(yaml_file: Path) -> None:
    gemini = resolve_judge("gemini", yaml_file, {})
    assert gemini.base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert gemini.endpoint == "chat" and gemini.provider == "google"
    claude = resolve_judge("claude", yaml_file, {})
    assert claude.base_url == "https://api.anthropic.com/v1" and claude.provider == "anthropic"


@pytest.mark.parametrize(
    ("name", "env", "message"),
    [
        (
            "deepseek-v4-pro",
            {},
            "entry 'deepseek-v4-pro' key 'api_key': environment variable "
            "MY_DEEPSEEK_KEY is not set",
        ),
        ("bad-key", {}, "entry 'bad-key' key 'temprature': unknown key"),
        ("bad-type", {}, "entry 'bad-type' api_type 'bedrock-converse' cannot judge"),
        ("no-key", {}, "entry 'no-key' has no api_key or api_keys"),
        ("bad-url", {}, "entry 'bad-url' key 'base_url': 'not-a-url' is not an http(s) URL"),
        ("gpt-9", {}, "judge model 'gpt-9' not found"),
    ],
)
def test_clear_errors_name_file_entry_and_key(
    yaml_file: Path, name: str, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as e:
        resolve_judge(name, yaml_file, env)
    assert message in str(e.value)
    if name != "gpt-9":
        assert str(yaml_file) in str(e.value)


def test_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        resolve_judge("x", tmp_path / "nope.yaml", {})
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [unclosed\n")
    with pytest.raises(ConfigError, match="cannot read YAML"):
        resolve_judge("a", bad, {})


def test_built_in_default_judge() -> None:
    cfg = resolve_judge("deepseek-v4-pro", None, {"DEEPSEEK_API_KEY": "k1"})
    assert cfg.base_url == "https://api.deepseek.com" and cfg.provider == "deepseek"
    assert cfg.thinking_level == "off" and cfg.temperature == 0.0 and cfg.api_keys == ("k1",)
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY is not set"):
        default_judge({})
    moved = default_judge({"DEEPSEEK_API_KEY": "k", "DEEPSEEK_BASE_URL": "http://127.0.0.1:1/"})
    assert moved.base_url == "http://127.0.0.1:1" and moved.provider == "deepseek"


def _cfg(provider: str, **kw: object) -> JudgeConfig:
    base = dict(name="m", base_url="http://x/v1", api_type="openai-completions", provider=provider)
    return JudgeConfig(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cfg", "present", "absent"),
    [
        # the default judge: thinking disabled, temperature 0, JSON mode
        (
            _cfg("deepseek", thinking_level="off"),
            {
                "thinking": {"type": "disabled"},
                "temperature": 0.0,
                "response_format": {"type": "json_object"},
                "max_tokens": 4096,  # room for prompt v2's requirements before the verdict
            },
            ("reasoning_effort",),
        ),
        (
            _cfg("deepseek", thinking_level="high"),
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
            ("temperature",),
        ),
        (
            _cfg("openai", thinking_level="low"),
            {"reasoning_effort": "low", "max_completion_tokens": 8192},
            ("temperature", "max_tokens", "thinking"),
        ),
        (_cfg("google"), {"reasoning_effort": "none", "temperature": 0.0}, ("thinking",)),
        (
            _cfg("anthropic", thinking_level="medium"),
            {"thinking": {"type": "enabled", "budget_tokens": 4096}},
            ("temperature",),
        ),
        # an unknown provider gets no provider-specific parameter, whatever the entry says
        (
            _cfg("generic", thinking_level="high", max_tokens=300),
            {"temperature": 0.0, "max_tokens": 300},
            ("thinking", "reasoning_effort", "reasoning"),
        ),
        (
            _cfg("openai", api_type="openai-responses", thinking_level="medium"),
            {
                "instructions": "S",
                "input": "U",
                "reasoning": {"effort": "medium"},
                "text": {"format": {"type": "json_object"}},
            },
            ("messages", "temperature"),
        ),
    ],
)
def test_call_params_per_provider(
    cfg: JudgeConfig, present: dict[str, object], absent: tuple[str, ...]
) -> None:
    body = call_params(cfg, "S", "U", json_mode=True)
    for key, value in present.items():
        assert body[key] == value, key
    for key in absent:
        assert key not in body, key
    assert "response_format" not in call_params(cfg, "S", "U", json_mode=False)


@pytest.mark.parametrize(
    ("api_type", "base_url", "provider"),
    [
        ("openai-completions", "https://api.deepseek.com", "deepseek"),
        ("openai-responses", "https://API.OpenAI.com/v1", "openai"),
        ("google-generative-ai", "https://proxy.example/v1", "google"),  # by its api_type
        ("openai-completions", "https://generativelanguage.googleapis.com/v1beta/openai", "google"),
        ("anthropic-messages", "https://proxy.example", "anthropic"),
        ("openai-completions", "https://api.anthropic.com/v1", "anthropic"),
        ("openai-completions", "https://openrouter.ai/api/v1", "generic"),
        ("openai-completions", "https://api.deepseek.com.example/v1", "generic"),
    ],
)
def test_an_entry_is_its_providers_by_api_type_then_host(
    api_type: str, base_url: str, provider: str
) -> None:
    assert provider_for(api_type, base_url).name == provider


def test_a_provider_is_one_module_that_registers_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each module of scorer/judge/providers registered itself on import; a provider registered
    the same way (here for the test's life) is found by host and shapes the judge's calls, with
    no other edit."""
    assert set(PROVIDERS) == {"generic", "deepseek", "openai", "google", "anthropic"}

    def thinking(call: ChatCall, level: str | None) -> None:
        call.extra["think"] = level or "off"

    monkeypatch.setattr("scorer.judge.providers.PROVIDERS", dict(PROVIDERS))
    register(Provider("acme", hosts=(".acme.test",), chat_thinking=thinking, token_cap="cap"))
    with pytest.raises(ValueError, match="registered twice"):
        register(Provider("acme"))
    assert provider_for("openai-completions", "https://llm.acme.test/v1").name == "acme"
    body = call_params(_cfg("acme", thinking_level="high"), "S", "U", json_mode=False)
    assert body["think"] == "high" and body["cap"] == THINKING_TOKENS and "max_tokens" not in body


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "999"}, 120.0),
        ({"retry-after": "soon"}, 1.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({}, 1.0),
        (None, 1.0),
    ],
)
def test_retry_after(headers: dict[str, str] | None, seconds: float) -> None:
    assert retry_after(headers) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("cfg", "body"),
    [
        (
            _cfg("deepseek", thinking_level="off"),
            {"max_tokens": 1, "temperature": 0.0, "thinking": {"type": "disabled"}},
        ),
        (_cfg("openai"), {"max_completion_tokens": 1, "temperature": 0.0}),
        (_cfg("google"), {"max_tokens": 1, "temperature": 0.0, "reasoning_effort": "none"}),
        (
            _cfg("openai", api_type="openai-responses"),
            {"input": PREFLIGHT_PROMPT, "max_output_tokens": 16, "temperature": 0.0},
        ),
    ],
)
def test_the_judges_preflight_is_its_providers_call(cfg: JudgeConfig, body: dict) -> None:
    """The pre-flight asks the judge as its client does (the provider's parameters, its cap's
    key), with a tiny cap and the pre-flight's one message."""
    sent = judge_endpoint(cfg).body
    assert {k: sent[k] for k in body} == body
    assert set(sent) - set(body) <= {"model", "messages"}
    if "messages" in sent:
        assert sent["messages"] == [{"role": "user", "content": PREFLIGHT_PROMPT}]
