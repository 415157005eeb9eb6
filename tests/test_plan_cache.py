"""The de-biased plan shared by shards through data.cache_dir (hdvqa.engine.plan_cache): made once,
read by the other shards, byte-identical when merged; a damaged or foreign plan is made again."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import hdvqa.engine.generate as engine_generate
from hdvqa.engine import Choice, Clip, Prototype, Target
from hdvqa.engine.admission import Drawn
from hdvqa.engine.balance import Balance
from hdvqa.engine.plan_cache import PlanStore, Unstorable, decode, encode
from hdvqa.engine.policies import resolve
from hdvqa.engine.prototype import Tier
from hdvqa.engine.seeding import generator
from hdvqa.pipeline import execute, plan_run
from hdvqa.values import typed
from hdvqa.write.shards import merge_parts
from tests.conftest import BANKS

pytest.importorskip("sklearn")

BALANCE = Balance()
POLICIES = [{"levelling": {"measures": ["value"]}}, {"adversarial": {"rounds": 1}}, "balanced_ranks"]


class Weights(Prototype):
    """Twelve targets on six videos; wrong values are multiples of the right one, then unrelated ones."""

    name = "weights"
    category = "test"
    count = 12

    def targets(self, tables):
        for i in range(self.count):
            yield Target(f"t{i}", [Clip(f"V{i // 2}", 1.0, 2.5)], {"i": i}, Choice(int(1000 + 370 * i), "positive"), {"i": i})

    def negatives(self, target, tables, rng):
        x = target.positive.value
        for m in (0.6, 1.3, 0.8, 2.9, 0.4, 1.7, 2.3):
            yield Choice(int(round(x * m)), f"multiplier {m}")
        for _ in range(12):
            yield Choice(int(rng.integers(x // 3, 6 * x)) | 1, "unrelated")


def run(proto=None, store=None, shard=(0, 1)):
    result = engine_generate.generate(proto or Weights(), None, n=None, seed=3, shard=shard, balance=BALANCE,
                                      policies=resolve(POLICIES, "test"), plan_store=store)
    return {q.target_id: (q.rank, [c.value for c in q.choices], [c.rule for c in q.choices], q.correct_idx)
            for q in result.questions}, result.skipped


@pytest.fixture
def admits(monkeypatch):
    calls = []
    real = engine_generate.admit
    monkeypatch.setattr(engine_generate, "admit", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_four_shards_make_the_plan_once_and_join_to_the_unsharded_questions(tmp_path, admits):
    whole, skipped = run()
    assert len(admits) == 1 and whole
    store = PlanStore(tmp_path, "key-1")
    joined, skips = {}, Counter()
    for i in range(4):
        part, part_skipped = run(store=store, shard=(i, 4))
        joined.update(part)
        skips.update(part_skipped)
    assert len(admits) == 2  # the unsharded run's, then shard 0's; shards 1-3 read it
    assert joined == whole and skips == skipped


def _item(tmp_path):
    (sidecar,) = tmp_path.rglob("item.json")
    return sidecar.parent


def test_a_damaged_plan_is_made_again_not_trusted(tmp_path, admits, capsys):
    whole, _ = run()
    store = PlanStore(tmp_path, "key-1")
    run(store=store, shard=(0, 2))
    data = _item(tmp_path) / "value.npz"
    data.write_bytes(data.read_bytes()[:-40])  # truncated
    part, _ = run(store=store, shard=(1, 2))
    assert "damaged or foreign" in capsys.readouterr().err
    assert len(admits) == 3 and part == {t: q for t, q in whole.items() if q[0] % 2 == 1}
    run(store=store, shard=(1, 2))  # stored again, whole: read
    assert len(admits) == 3


def test_a_plan_of_other_targets_under_the_same_key_is_made_again(tmp_path, admits, capsys):
    class Fewer(Weights):
        count = 9

    store = PlanStore(tmp_path, "same-key")
    run(Fewer(), store=store, shard=(0, 2))  # stored for nine targets
    whole, _ = run()
    part, _ = run(store=store, shard=(1, 2))  # twelve targets: that plan is not this run's
    err = capsys.readouterr().err
    assert "damaged or foreign" in err and "the plan of other targets" in err
    assert len(admits) == 3
    assert part == {t: q for t, q in whole.items() if q[0] % 2 == 1}


def test_the_codec_keeps_what_a_plan_holds_and_refuses_other_classes():
    rng = generator(0, "p", "t")
    rng.random()
    value = typed([{"start": 1.5, "end": 2.0}])
    drawn = Drawn(Target("t", [Clip("V", 0.5, None)], {"k": (1, 2)}, Choice(3.5, "r", ("s",), (), Tier.DEBIASED), {"i": 1}),
                  rng.bit_generator.state, "asked?", ([Choice(-0.0, "n")], rng.bit_generator.state, Counter({"a": 2}), Counter()))
    plan = {"drawn": drawn, "answers": Counter({value: 2}), "allowed": frozenset({value}), "wanted": {"value": (0.5, 1.0)},
            "arr": np.arange(3, dtype=np.int32), "scalar": np.float64(0.25), 7: {1, 2}}
    back = decode(encode(plan))
    assert back.pop("arr").tolist() == plan.pop("arr").tolist()
    assert back == plan and type(back["drawn"].target.inputs[0]) is Clip and back["drawn"].target.tier is Tier.PAPER
    assert back["answers"][typed([{"start": 1.5, "end": 2.0}])] == 2 and type(back["scalar"]) is np.float64
    with pytest.raises(ValueError, match="outside hdvqa"):
        decode({"o": "os:PathLike", "f": {}})
    with pytest.raises(ValueError, match="not a class"):
        decode({"o": "hdvqa.engine.plan_cache:encode", "f": {}})
    with pytest.raises(Unstorable):
        encode(object())


def _packed(count=6):
    from hdvqa.engine.admission import Admission
    from hdvqa.engine.plan_cache import pack

    planned = [Target(f"t{i}", [], {}, Choice(i, "positive")) for i in range(count)]
    spans = [{"video": f"V{i}", "start": 1.5 * i, "end": 2.0 * i} for i in range(3)]
    admission = Admission(excluded={1: "why"}, answers=Counter({"a": 2}))
    admission.wanted.update({r: {"value": (r, spans)} for r in range(0, count, 2)})
    return pack(admission, planned, "k"), planned, spans


def test_the_stored_plan_is_deflated_per_rank_and_rows_of_one_shape_keep_their_keys_once():
    from hdvqa.engine.plan_cache import unpack

    spans = [{"video": "V", "start": 1.5, "end": 2.0}, {"video": "W", "start": 0.0, "end": None}]
    assert encode(spans) == {"r": ["video", "start", "end"], "v": [["V", 1.5, 2.0], ["W", 0.0, None]]}
    assert decode(encode(spans)) == spans and [list(d) for d in decode(encode(spans))] == [["video", "start", "end"]] * 2
    assert encode([{"a": 1}, {"b": 1}]) == [{"m": {"a": 1}}, {"m": {"b": 1}}]  # other keys: dict by dict
    assert encode([{"a": (1,)}, {"a": (2,)}]) == [{"m": {"a": {"t": [1]}}}, {"m": {"a": {"t": [2]}}}]  # not scalars
    value, planned, spans = _packed(40)
    assert len(value["records"]) < 0.25 * int(value["sizes"].sum())  # 20 records alike: the dictionary carries them
    back = unpack(value, planned, "k", lambda admission: [2, 3])  # decoded: only the ranks asked for
    assert back.wanted == {2: {"value": (2, spans)}} and back.excluded == {1: "why"} and back.answers == Counter({"a": 2})


@pytest.mark.parametrize("damage, says", [
    (lambda v: v["sizes"].__setitem__(0, v["sizes"][0] - 1), "does not inflate to its size"),  # it would inflate further
    (lambda v: v["sizes"].__setitem__(0, v["sizes"][0] + 1), "does not inflate to its size"),
    (lambda v: v["records"].__setitem__(slice(3, 9), 0), "inflat|Error"),
    (lambda v: v.pop("zdict"), "not a stored plan of this version"),
    (lambda v: v["offsets"].__setitem__(2, 10 ** 9), "do not add up"),
])
def test_a_stored_plan_that_does_not_inflate_or_add_up_is_refused(damage, says):
    from hdvqa.engine.plan_cache import unpack

    value, planned, _ = _packed()
    value = {k: np.array(v) for k, v in value.items()}  # writable copies
    damage(value)
    with pytest.raises(Exception, match=says):
        unpack(value, planned, "k", lambda admission: range(len(planned)))
    with pytest.raises(ValueError, match="rows that do not match"):
        decode({"r": ["a", "b"], "v": [[1]]})
    with pytest.raises(ValueError, match="rows that do not match"):
        decode({"r": ["a"], "v": [[{"o": "os:PathLike", "f": {}}]]})


def test_sharded_runs_with_a_cache_dir_merge_to_the_unsharded_bytes(tmp_path):
    def cfg(out, **extra):
        return {"prototype": {"name": "step_recognition", "params": None}, "n": "all", "seed": 0, "out": str(out),
                "data": {"source": "demo", "cache_dir": str(tmp_path / "cache")}, **extra}

    _, whole = execute(plan_run(cfg(tmp_path / "whole")))
    for i in range(3):
        execute(plan_run(cfg(tmp_path / "parts", shard=f"{i}/3")))
    (merged,) = merge_parts(tmp_path / "parts")
    assert merged.read_bytes() == whole.read_bytes()
    assert len(list((tmp_path / "cache").rglob("_plan_item/*/item.json"))) == 1  # one plan for the run and its shards


def test_a_shards_progress_names_it_and_says_what_sharding_costs_without_a_cache_dir(tmp_path, monkeypatch, capsys):
    import hdvqa.cli.generate as cli_generate
    from hdvqa.cli.main import main

    names = []
    real = cli_generate.Progress
    monkeypatch.setattr(cli_generate, "Progress", lambda name, *a, **k: names.append(name) or real(name, *a, **k))
    main(["generate", "+prototype=recipe_recognition", "n=2", "shard=1/2", f"out={tmp_path / 'q'}"])
    assert names == ["recipe_recognition [shard 1/2]"]
    assert "recipe_recognition [shard 1/2]: note: without data.cache_dir each shard computes" in capsys.readouterr().err
    main(["generate", "+prototype=recipe_recognition", "n=2", "shard=0/2", f"out={tmp_path / 'q'}",
          f"data.cache_dir={tmp_path / 'cache'}"])
    assert names[-1] == "recipe_recognition [shard 0/2]" and "without data.cache_dir" not in capsys.readouterr().err


def test_the_plans_phases_report_their_own_counts():
    # a long plan used to sit at a full "preparing" bar (the release's multi_step_localization for
    # minutes): each policy's phase now counts its own work to its end
    seen = []
    engine_generate.generate(Weights(), None, n=None, seed=3, balance=BALANCE, policies=resolve(POLICIES, "test"),
                             progress=lambda done, total, phase="questions": seen.append((phase, done, total)))
    phases = list(dict.fromkeys(phase for phase, _, _ in seen))
    assert phases == ["preparing", "levelling", "adversarial picks", "adversarial rounds", "questions"]
    for phase in phases:
        last = [(done, total) for p, done, total in seen if p == phase][-1]
        assert last[0] == last[1] > 0
    assert ("adversarial rounds", 0, 2) in seen  # rounds: 1 (each a fit and its swaps), then the last fit


def test_a_shard_started_with_another_waits_for_its_plan_and_a_dead_holders_lock_is_taken_over(tmp_path, admits,
                                                                                                monkeypatch, capsys):
    import json
    import os
    import socket
    import subprocess
    import sys
    import threading

    import hdvqa.engine.plan_cache as plan_cache

    monkeypatch.setattr(plan_cache, "LOCK_POLL", 0.05)
    store = PlanStore(tmp_path, "key-1")
    lock = tmp_path / "plans" / "key-1.lock"
    lock.parent.mkdir()
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": os.getpid()}))  # a live holder: this process
    whole, _ = run()
    parts = {}
    waiting = threading.Thread(target=lambda: parts.update(run(store=store, shard=(1, 2))[0]))
    waiting.start()
    waiting.join(1.0)
    assert waiting.is_alive() and len(admits) == 1  # waits, computes nothing
    real_take = plan_cache._take  # this thread plays the holder: it computes and stores, then releases
    monkeypatch.setattr(plan_cache, "_take", lambda path: threading.current_thread() is threading.main_thread()
                        or real_take(path))
    run(store=store, shard=(0, 2))
    assert not lock.exists()
    waiting.join(30)
    assert not waiting.is_alive() and len(admits) == 2  # it read the stored plan
    assert parts == {t: q for t, q in whole.items() if q[0] % 2 == 1}
    assert "waiting for the job computing its plan" in capsys.readouterr().err
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": int(dead.stdout)}))
    other = PlanStore(tmp_path / "other", "key-2")
    (tmp_path / "other" / "plans").mkdir(parents=True)
    os.replace(lock, tmp_path / "other" / "plans" / "key-2.lock")
    monkeypatch.setattr(plan_cache, "_take", real_take)
    run(store=other, shard=(0, 2))  # its holder is gone: taken over at once, made, released
    assert len(admits) == 3 and not (tmp_path / "other" / "plans" / "key-2.lock").exists()


def test_only_runs_that_need_the_whole_plan_share_it(tmp_path):
    from hdvqa.pipeline import plan_store

    def store(**extra):
        cfg = {"prototype": {"name": "step_recognition", "params": None}, "seed": 0, "out": str(tmp_path),
               "data": {"source": "demo"}, **extra}
        plan = plan_run(cfg)
        return plan_store(plan, type("Tables", (), {"cache_dir": tmp_path})())

    assert store(n=40) is None  # its first ranks only: levelling decides no more
    assert store(n="all") is not None and store(n=40, shard="1/2") is not None
    assert store(n="all", sampling="paper") is None
    assert store(n="all").key == store(n="all", shard="0/2").key != store(n="all", seed=1).key


def test_recipe_recognitions_plan_is_kept_for_its_shards(tmp_path, capsys):
    # its targets used to carry the recipes frame (a pandas object the codec refuses): every shard made the plan
    def cfg(out, **extra):
        return {"prototype": {"name": "recipe_recognition", "params": None}, "n": "all", "seed": 0, "out": str(out),
                "data": {"source": "demo", "cache_dir": str(tmp_path / "cache"), "banks": dict(BANKS)}, **extra}

    result, whole = execute(plan_run(cfg(tmp_path / "whole")))
    assert len(result.questions) >= 2  # one per shard at least
    for i in range(2):
        execute(plan_run(cfg(tmp_path / "parts", shard=f"{i}/2")))
    assert "is not kept in data.cache_dir" not in capsys.readouterr().err
    assert len(list((tmp_path / "cache").rglob("_plan_item/*/item.json"))) == 1
    (merged,) = merge_parts(tmp_path / "parts")
    assert merged.read_bytes() == whole.read_bytes()
