"""A small client for any OpenAI-compatible chat endpoint (vLLM, llama.cpp, a hosted API),
with its responses cached on disk by prompt hash.

``POST {base_url}/chat/completions`` with ``{"model", "messages": [user prompt], "temperature": 0}``;
the key, if any, comes from the environment variable the config names (never from the
config itself), read when a request is sent and written nowhere. A response is stored under
``cache/<sha256 of model and prompt>.json`` once it arrived whole, so a re-run sends nothing and
gives the same questions: the LLM path's only disk cache (``hdvqa.dialogue.pairs_table`` says why
it is per request, beside the in-memory table ``llm_question_sets``).

Errors a user must fix (cannot connect, 401/403/404) stop the run with one line; a bad
answer (5xx, 429, no answer in time or a connection lost, after retries; not a chat completion)
is a counted failure of that request.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

from hdvqa.errors import ConfigError

RETRIES = 2


class LlmFailure(Exception):
    """One request gave no usable answer; the message is the counted reason."""


def prompt_key(model: str, prompt: str) -> str:
    return hashlib.sha256(json.dumps({"model": model, "prompt": prompt}, sort_keys=True).encode("utf-8")).hexdigest()


class ChatClient:
    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", cache_dir: str | Path | None = None,
                 timeout: float = 120.0):
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"llm base_url must start with http:// or https://, got {base_url!r}")
        if not model:
            raise ConfigError("generator=llm needs a model name (prototype.params.llm_model=...)")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key_env, self.timeout = model, api_key_env, timeout
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else None
        self.counts: Counter[str] = Counter()  # requests sent, cache hits, failures

    def _cached(self, key: str) -> str | None:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / f"{key}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))["response"]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: asked again

    def _store(self, key: str, prompt: str, response: str) -> None:
        if self.cache_dir is None:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"model": self.model, "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(), "response": response}, handle)
        os.replace(tmp, self.cache_dir / f"{key}.json")

    def _post(self, prompt: str) -> str:
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}).encode()
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        last = "no attempt"
        for _ in range(1 + RETRIES):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                    payload = reply.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as exc:
                if exc.code in (401, 403):
                    raise ConfigError(f"llm endpoint {self.url} refused the key (HTTP {exc.code}); set ${self.api_key_env}") from None
                if exc.code == 404:
                    raise ConfigError(f"llm endpoint {self.url} not found (HTTP 404); check llm_base_url (it usually ends in /v1)") from None
                last = f"HTTP {exc.code}"
                if exc.code in (429,) or exc.code >= 500:
                    continue
                raise LlmFailure(last) from None
            except urllib.error.URLError as exc:
                raise ConfigError(f"llm endpoint {self.url}: cannot connect ({exc.reason})") from None
            except TimeoutError:
                last = f"no answer within {self.timeout:g} s"
                continue
            except (http.client.HTTPException, ConnectionError) as exc:  # the server closed or broke off its reply
                last = f"connection lost ({type(exc).__name__})"
                continue
            try:
                content = json.loads(payload)["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                raise LlmFailure("the reply is not a chat completion") from None
            if not isinstance(content, str):  # e.g. null: a refusal or a tool call
                raise LlmFailure("the reply holds no text")
            return content
        raise LlmFailure(last)

    def complete(self, prompt: str) -> str:
        """The model's answer to ``prompt``: from the cache, or asked once and stored."""
        key = prompt_key(self.model, prompt)
        cached = self._cached(key)
        if cached is not None:
            self.counts["cache hits"] += 1
            return cached
        self.counts["requests"] += 1
        try:
            response = self._post(prompt)
        except LlmFailure:
            self.counts["failed requests"] += 1
            raise
        self._store(key, prompt, response)
        return response
