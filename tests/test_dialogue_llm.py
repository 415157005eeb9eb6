"""generator=llm against an OpenAI-compatible server the test runs on 127.0.0.1 (stdlib, in a thread)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from hdvqa.dialogue.llm import ChatClient
from hdvqa.engine import Clip, Skipped
from hdvqa.engine.params import build_params
from hdvqa.engine.registry import load_prototype_class
from hdvqa.errors import ConfigError
from hdvqa.render import generate_rendered
from hdvqa.tables import TableSet

TURNS = [
    ("9", "expert", 9.0, 10.0, "Now, let's focus on the next steps."),
    ("10", "trainee", 11.0, 13.0, "Alright, which of the two wheels should I remove first?"),
    ("11", "trainee", 13.5, 14.0, "OK, I see."),
    ("12", "expert", 15.0, 16.5, "You should remove the front wheel."),
    ("13", "trainee", 17.0, 19.0, "Is the angle of the bike okay, or should I adjust it?"),
    ("14", "expert", 19.5, 21.0, "Lower the saddle a bit first."),
]
GOOD = {"text": "Which wheel should be removed first?", "question_involved_ids": "10-11",
        "options": ["The front wheel", "The rear wheel", "Both wheels", "Only the left wheel", "Only the right wheel"],
        "correct_answer": "The front wheel", "answer_involved_ids": "12",
        "paraphrases": ["Which wheel comes off first?", "What wheel is taken off before the other?"]}
BAD = [
    {**GOOD, "question_involved_ids": "13", "options": ["Lower it", "Lower it", "Raise it", "Tilt it", "Leave it"], "correct_answer": "Lower it"},
    {**GOOD, "question_involved_ids": "13", "correct_answer": "Lower the saddle"},
    {**GOOD, "question_involved_ids": "99"},
]


class Server:
    """A chat-completions endpoint answering every prompt with ``reply`` (or an HTTP status; None:
    closing the connection without an answer)."""

    def __init__(self, reply, status=200):
        self.reply, self.status, self.prompts, self.auth = reply, status, [], []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.prompts.append(body["messages"][0]["content"])
                outer.auth.append(self.headers.get("Authorization"))
                if outer.status is None:
                    self.close_connection = True
                    return
                data = json.dumps({"choices": [{"message": {"role": "assistant", "content": outer.reply}}]}).encode()
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def tables(tmp_path) -> TableSet:
    folder = tmp_path / "dialogue"
    folder.mkdir(exist_ok=True)
    (folder / "bike.jsonl").write_text("".join(json.dumps({"video_id": "V1", "turn_id": t, "speaker": s, "start": a, "end": b,
                                                           "text": x, "video_duration": 60}) + "\n" for t, s, a, b, x in TURNS))
    return TableSet(tmp_path)


def prototype(url, tmp_path, **more):
    cls = load_prototype_class("dialogue_qa")
    params = {"generator": "llm", "llm_base_url": url, "llm_model": "tiny", "llm_cache": str(tmp_path / "cache"),
              "llm_api_key_env": "HDVQA_TEST_KEY", "llm_timeout": 10.0, **more}
    return cls(build_params("dialogue_qa", cls.Params, params))


def test_llm_sets_parsed_validated_cached_and_failures_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("HDVQA_TEST_KEY", "sekret")
    reply = "```json\n" + json.dumps([GOOD, *BAD]) + "\n```"
    with Server(reply) as server:
        result = generate_rendered(prototype(server.url, tmp_path), tables(tmp_path), n=None, seed=0)
        assert len(server.prompts) == 1 and server.auth == ["Bearer sekret"]
        prompt = server.prompts[0]
        assert prompt.startswith("I will provide you with a transcript of a video. Simulate watching the video")
        assert "ID 10: T: Alright, which of the two wheels should I remove first?" in prompt and "ID 12: E:" in prompt
        (q,) = result.questions
        assert q.question == "Which wheel should be removed first?" and q.choices[q.correct_idx] == "The front wheel"
        assert sorted(q.choices) == sorted(GOOD["options"])
        assert q.metadata["choices"][q.correct_idx]["sources"] == ["V1/10", "V1/12"]
        assert q.inputs["video 1"] == {"id": "V1", "start_time": "00:00:06.000", "end_time": "00:00:11.000"}
        assert result.skipped == {"llm set rejected: degenerate set: duplicate options": 1,
                                  "llm set rejected: the correct answer is not among the options": 1,
                                  "llm set rejected: turn id '99' is not in the transcript": 1}
        # a re-run is answered from the cache: nothing sent, the same question
        again = generate_rendered(prototype(server.url, tmp_path), tables(tmp_path), n=None, seed=0)
        assert len(server.prompts) == 1 and again.questions == result.questions
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1


def test_unusable_answers_and_endpoints(tmp_path):
    with Server("I cannot help with that.") as server:
        result = generate_rendered(prototype(server.url, tmp_path), tables(tmp_path), n=None, seed=0)
        assert not result.questions and result.skipped == {"llm request failed: the answer holds no JSON list of questions": 1}
    with Server("oops", status=500) as server:
        result = generate_rendered(prototype(server.url, tmp_path, llm_cache=""), tables(tmp_path), n=None, seed=0)
        assert result.skipped == {"llm request failed: HTTP 500": 1} and len(server.prompts) == 3  # retried twice
    with Server("no", status=401) as server:
        with pytest.raises(ConfigError, match=r"refused the key \(HTTP 401\); set \$HDVQA_TEST_KEY"):
            list(prototype(server.url, tmp_path, llm_cache="").targets(tables(tmp_path)))
    port_was = server.url  # closed now: nothing listens
    with pytest.raises(ConfigError, match="cannot connect"):
        ChatClient(port_was, "tiny").complete("hello")


def test_a_users_template_and_endpoint_by_configuration_alone(tmp_path):
    template = tmp_path / "mine.j2"
    template.write_text("Make questions. {% for t in turns %}[{{ t.id }}|{{ t.speaker }}] {{ t.text }}\n{% endfor %}")
    with Server(json.dumps({"questions": [GOOD]})) as server:
        cls = load_prototype_class("dialogue_qa")
        from hdvqa.cli.main import main

        out = tmp_path / "out"
        root = tables(tmp_path).root
        main(["generate", "+prototype=dialogue_qa", "data=hd_epic", f"data.root={root}", f"out={out}", "sampling=paper",
              "prototype.params.generator=llm", f"prototype.params.llm_base_url={server.url}", "prototype.params.llm_model=tiny",
              f"prototype.params.llm_template={template}", f"prototype.params.llm_cache={tmp_path / 'c'}"])
        assert re.match(r"Make questions\. \[9\|E\] Now", server.prompts[0])
        doc = json.loads((out / "dialogue_dialogue_qa.json").read_text())
        (entry,) = doc.values()
        assert entry["question"] == GOOD["text"] and cls.name == entry["metadata"]["prototype"]


def sets_of(t, url, tmp_path, **more):
    """The table ``llm_question_sets`` as the prototype's defaults (and ``prototype()``'s) read it."""
    params = {"base_url": url, "model": "tiny", "api_key_env": "HDVQA_TEST_KEY", "template": "", "cache": str(tmp_path / "cache"),
              "turns_per_request": 80, "timeout": 10.0, "paraphrases": 4, **more}
    return t.table("llm_question_sets", **params)


def test_the_sets_are_a_table_computed_once_per_tableset(tmp_path):
    with Server(json.dumps([GOOD, *BAD])) as server:
        t = tables(tmp_path)
        proto = prototype(server.url, tmp_path, llm_cache="")  # no disk cache: only the TableSet keeps the answer
        first = generate_rendered(proto, t, n=None, seed=0)
        again = generate_rendered(proto, t, n=None, seed=0)
        assert len(server.prompts) == 1 and again.questions == first.questions and first.questions
        sets = sets_of(t, server.url, tmp_path, cache="")
        assert len(server.prompts) == 1
    assert list(sets["where"]) == ["V1@0#0", "V1@0#1", "V1@0#2", "V1@0#3"]
    assert list(sets["failure"]) == ["", "llm set rejected: degenerate set: duplicate options",
                                     "llm set rejected: the correct answer is not among the options",
                                     "llm set rejected: turn id '99' is not in the transcript"]
    good = sets.iloc[0]
    assert (good.question_turn, good.question_turns, good.answer_turns, good.start) == ("10", ("10", "11"), ("12",), 11.0)
    assert good.negatives == tuple(o for o in GOOD["options"] if o != GOOD["correct_answer"])
    assert good.paraphrases == tuple(GOOD["paraphrases"]) and sets["request"].nunique() == 1
    assert vars(proto) == {"params": proto.params}  # the prototype keeps nothing of a run


def test_the_request_key_is_its_content_and_the_api_key_is_kept_nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("HDVQA_TEST_KEY", "sekret")
    mine = tmp_path / "mine.j2"
    mine.write_text("Make questions. {% for t in turns %}[{{ t.id }}|{{ t.speaker }}] {{ t.text }}\n{% endfor %}")
    changes = [{}, {"model": "tiny-2"}, {"template": str(mine)}, {"turns_per_request": 3}]
    with Server(json.dumps([GOOD])) as server:
        t = tables(tmp_path)
        first = [sets_of(t, server.url, tmp_path, **change) for change in changes]
        assert len(server.prompts) == 5  # one each, two for the turns in chunks of 3
        keys = [tuple(dict.fromkeys(f["request"])) for f in first]
        assert len(set(sum(keys, ()))) == 5
        # a new TableSet on the same cache sends nothing, and a timeout is no part of the request
        again = [sets_of(tables(tmp_path), server.url, tmp_path, timeout=20.0, **change) for change in changes]
        assert len(server.prompts) == 5
        for a, b in zip(first, again):
            pd.testing.assert_frame_equal(a, b)
    files = list((tmp_path / "cache").glob("*.json"))
    assert sorted(f.stem for f in files) == sorted(sum(keys, ()))
    assert server.auth == ["Bearer sekret"] * 5
    assert not any("sekret" in f.read_text() for f in files) and "sekret" not in repr(list(t.cache.tables))


def test_a_failed_request_is_a_counted_skip_of_its_video_not_a_traceback(tmp_path):
    reason = "llm request failed: connection lost (RemoteDisconnected)"
    with Server("", status=None) as server:  # the server hangs up without answering
        t, proto = tables(tmp_path), prototype(server.url, tmp_path)
        assert list(proto.targets(t)) == [Skipped("llm-failure/V1@0", reason, (Clip("V1"),))]
        assert len(server.prompts) == 3  # retried twice
        result = generate_rendered(proto, t, n=None, seed=0)
        assert not result.questions and result.skipped == {reason: 1} and len(server.prompts) == 3
    assert not list((tmp_path / "cache").glob("*.json"))  # a failure is not kept: the next run asks again
    with Server(None) as server:  # a chat completion without text (content null)
        result = generate_rendered(prototype(server.url, tmp_path), tables(tmp_path), n=None, seed=0)
        assert result.skipped == {"llm request failed: the reply holds no text": 1} and len(server.prompts) == 1
