"""The narration parser (hdvqa/nlp): Table A2 of the HD-EPIC paper, pronoun rules, classes, CLI."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from hdvqa.nlp import ClassVocabulary, load_pipeline, parse_narrations, parse_texts
from hdvqa.nlp.parse import clear_cache

spacy = pytest.importorskip("spacy")


@pytest.fixture(scope="session")
def nlp():
    return load_pipeline()  # once per session: loading takes a second or two


def strip_stop(text):
    return text.rstrip(".") if text else text


XFAIL_PARSE = pytest.mark.xfail(strict=True, reason="the small model parses this object as a clause (documented miss)")
# Table A2: narration, verbs, nouns, hands, main action, how, why ("" for "-"). The table
# prints clauses without their closing full stop and before pronouns were replaced.
TABLE_A2 = [
    ("Transferring the plate stack to my right hand so that I can turn off the tap with my left hand.",
     ["transfer"], ["plate stack", "tap"], ["right hand", "left hand"], ("transfer", "plate stack"), "",
     "so that I can turn off the tap with left hand"),
    ("Push the bag of potatoes along the bottom shelf of the fridge so that I can close the fridge.",
     ["push"], ["bag of potatoes", "bottom shelf of fridge", "fridge"], [], ("push", "bag of potatoes"), "",
     "so that I can close the fridge"),
    ("Pick up the two chopped lemon pieces using both hands so as to weigh them.",
     ["pick up"], ["two chopped lemon pieces"], ["both hands"], ("pick up", "two chopped lemon pieces"), "using both hands",
     "to weigh them"),
    ("Brush bit of onion skin off the chopping board using the knife in my right hand because I don’t want to accidentally eat it.",
     ["brush"], ["bit of onion skin", "chopping board", "knife"], ["right hand"], ("brush", "bit of onion skin"),
     "using the knife in my right hand", "because I don’t want to accidentally eat it"),
    pytest.param("Shake the foil wrapping to make sure it is empty.",
                 ["shake"], ["foil wrapping"], [], ("shake", "foil wrapping"), "", "to make sure it is empty", marks=XFAIL_PARSE),
    ("Turn on the gas burner by twisting the dial in the right hand and pressing down the ignition switch in the left hand.",
     ["turn on", "twist", "press down"], ["gas burner", "dial", "ignition switch"], ["right hand", "left hand"], ("turn on", "gas burner"),
     "by twisting the dial in the right hand and pressing down the ignition switch in the left hand", ""),
    pytest.param("I open the washing up liquid bottle by flicking the bottle lid up with my right hand.",
                 ["open", "flick up"], ["washing up liquid bottle", "bottle lid"], ["right hand"], ("open", "washing up liquid bottle"),
                 "by flicking the bottle lid up with right hand", "", marks=XFAIL_PARSE),
    pytest.param("Wipe down the countertop using the wet kitchen roll in the right hand, pushing the food and sugar into the food bin that’s held next to the countertop using the left hand.",
                 ["wipe down", "push"], ["countertop", "wet kitchen roll", "food", "sugar", "food bin"], ["right hand", "left hand"],
                 ("wipe down", "countertop"),
                 "using the wet kitchen roll in the right hand, pushing the food and sugar into the food bin held next to the countertop using the left hand", "",
                 marks=pytest.mark.xfail(strict=True, reason="the table drops \"that’s\"; the published questions keep \"that's\"")),
    ("Put the knife in the drawer by putting it vertically in a slot.",
     ["put"], ["knife", "drawer", "slot"], [], ("put", "knife"), "by putting it vertically in a slot", ""),
    ("Open the semolina flour bag by unrolling the top part of the plastic bag.",
     ["open", "unroll"], ["semolina flour bag", "top part of plastic bag"], [], ("open", "semolina flour bag"),
     "by unrolling the top part of the plastic bag", ""),
]


@pytest.mark.parametrize("text,verbs,nouns,hands,main,how,why", TABLE_A2)
def test_table_a2(nlp, text, verbs, nouns, hands, main, how, why):
    (parse,) = parse_texts([text], nlp)
    got = (parse.verbs, parse.nouns, parse.hands, parse.main_action,
           strip_stop(parse.how.raw()) if parse.how else "", strip_stop(parse.why.raw()) if parse.why else "")
    assert got == (verbs, nouns, hands, main, how, why)


def clauses_of(nlp, *texts):
    frame = pd.DataFrame({"unique_narration_id": [f"n{i}" for i in range(len(texts))], "video_id": "P01-v",
                          "narration": list(texts), "start_timestamp": [float(i) for i in range(len(texts))],
                          "end_timestamp": [i + 0.5 for i in range(len(texts))]})
    out = parse_narrations(frame, nlp, VOCAB)
    return list(zip(out["how_clause"], out["why_clause"]))


VOCAB = ClassVocabulary(
    verb_keys={"take": 0, "put": 1, "turn on": 6, "close": 4}, verb_instances={"pick up": 0, "turn on": 1, "twist": 4, "place": 1},
    noun_keys={"bowl": 7, "lid": 9}, noun_instances={"bowl": 7, "red bowl": 7, "lid": 9, "jar": 10},
)


def test_pronoun_object_is_the_main_object(nlp):
    ((how, _),) = clauses_of(nlp, "Lift the bowl using the sponge, rotating it slowly.")
    assert how == "using the sponge, rotating the bowl slowly."


def test_pronoun_after_a_preposition_is_the_last_place(nlp):
    ((_, why),) = clauses_of(nlp, "Tap the spoon on the rim of the jar to drop the sugar stuck to it.")
    assert why == "to drop the sugar stuck to the jar."


def test_coordinated_verbs_share_their_object(nlp):
    ((how, _),) = clauses_of(nlp, "Close the jar by holding the lid with the finger and pressing it in.")
    assert how == "by holding the lid with the finger and pressing the lid in."


def test_hand_objects_give_way_to_the_place(nlp):
    ((_, why),) = clauses_of(nlp, "Slide the left hand inside the oven glove to wear it.")
    assert why == "to wear the oven glove."


def test_unresolved_pronoun_falls_back_on_the_previous_narration(nlp):
    rows = clauses_of(nlp, "Pick up the red bowl from the shelf.", "Turn around to rinse it.")
    assert rows[1][1] == "to rinse the red bowl."


def test_classes_prefer_a_class_name_and_shed_modifiers():
    assert VOCAB.verb_class("turn on") == 6  # the class called turn-on, not put's instance
    assert VOCAB.verb_class("twist") == 4
    assert VOCAB.noun_class("correct red bowl") == 7
    assert VOCAB.noun_class("lid of jar") == 9  # X of Y: X first
    assert VOCAB.noun_class("spatula") is None


def test_classes_file_later_class_wins_and_bad_rows_are_located(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("id,key,instances,category\n0,take,\"['move', 'grab']\",a\n1,move,\"['move']\",b\n")
    keys_file = ClassVocabulary.from_files(path, path)
    assert keys_file.verb_class("grab") == 0 and keys_file.verb_class("move") == 1
    path.write_text("id,key,instances,category\n0,take,not a list,a\n")
    with pytest.raises(Exception, match=r"record row 2, field instances"):
        ClassVocabulary.from_files(path, path)


class CountingPipeline:
    def __init__(self, nlp):
        self.nlp, self.seen, self.meta = nlp, [], {"lang": "en", "name": "counting", "version": "0"}

    def pipe(self, texts, batch_size):
        texts = list(texts)
        self.seen.extend(texts)
        return self.nlp.pipe(texts, batch_size=batch_size)


def test_each_distinct_sentence_is_parsed_once(nlp):
    clear_cache()
    counting = CountingPipeline(nlp)
    texts = ["Open the jar.", "Open the jar.", "Close the lid."]
    first = parse_texts(texts, counting)
    again = parse_texts(texts, counting)
    assert len(counting.seen) == 2 and first == again


def test_parsed_output_loads_as_release_narrations(nlp, real_root, tmp_path):
    from hdvqa.nlp.inputs import read_text_narrations
    from hdvqa.tables import TableSet

    frame = read_text_narrations(real_root / "extra" / "narrations_text_P01.csv").head(40)
    classes = ClassVocabulary.from_folder(real_root / "narrations-and-action-segments")
    out = parse_narrations(frame, nlp, classes)
    assert list(out.columns[:16]) == ["unique_narration_id", "participant_id", "video_id", "narration", "start_timestamp",
                                      "end_timestamp", "nouns", "verbs", "pairs", "main_actions", "verb_classes", "noun_classes",
                                      "pair_classes", "main_action_classes", "hands", "narration_timestamp"]
    path = tmp_path / "parsed.parquet"
    out.to_parquet(path, index=False)
    loaded = TableSet(real_root, files={"narrations": str(path)}, invalid_rows="drop")["narrations"]
    assert len(loaded) == 40 and loaded["nouns"].map(len).sum() > 40


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "hdvqa", "parse-narrations", *args], capture_output=True, text=True)


def test_cli_parses_a_csv_and_rejects_bad_rows(tmp_path):
    classes = tmp_path / "classes"
    classes.mkdir()
    (classes / "HD_EPIC_verb_classes.csv").write_text("id,key,instances,category\n0,take,\"['pick up']\",a\n1,open,\"['open']\",b\n")
    (classes / "HD_EPIC_noun_classes.csv").write_text("id,key,instances,category\n0,jar,\"['jar']\",a\n1,lid,\"['lid']\",b\n")
    good = tmp_path / "in.csv"
    good.write_text("id,video,start,end,text\nP01-v-1,P01-v,1.0,2.0,Open the jar by twisting the lid.\nP01-v-2,P01-v,2.0,3.0,Pick up the lid.\n")
    out = tmp_path / "out.parquet"
    done = run_cli(f"in={good}", f"out={out}", f"classes={classes}")
    assert done.returncode == 0, done.stderr
    parsed = pd.read_parquet(out)
    assert list(parsed["main_action"]) == ["open jar", "pick up lid"]
    assert parsed["how_clause"][0] == "by twisting the lid."

    bad = tmp_path / "bad.csv"
    bad.write_text("id,video,start,end,text\nP01-v-1,P01-v,4.0,2.0,Open the jar.\n")
    failed = run_cli(f"in={bad}", f"out={tmp_path / 'bad.parquet'}", f"classes={classes}")
    assert failed.returncode == 2 and not (tmp_path / "bad.parquet").exists()
    assert failed.stderr.strip().count("\n") == 0
    assert "record P01-v-1, field end_timestamp: end 2.0 precedes start 4.0" in failed.stderr


def test_classes_reproduce_every_official_label(real_root):
    from hdvqa.tables.safe_pickle import load_pickle

    folder = real_root / "narrations-and-action-segments"
    official = load_pickle(folder / "HD_EPIC_Narrations.pkl")
    vocab = ClassVocabulary.from_folder(folder)
    for words, labels, lookup in (("verbs", "verb_classes", vocab.verb_class), ("nouns", "noun_classes", vocab.noun_class)):
        pairs = [(w, c) for ws, cs in zip(official[words], official[labels]) for w, c in zip(ws, cs)]
        assert [lookup(w) for w, _ in pairs] == [c for _, c in pairs]


@pytest.mark.parametrize("text, states", [
    ("Scoop grinded coffee into espresso cup.", {"grind"}),  # the release's P08-20240613-122900-38
    ("Pour boiled water into the cup", {"boil"}),
    ("Open the closed drawer", {"close"}),
    ("Grind the grinded coffee", set()),  # also written as the action
    ("Grind coffee beans with left hand", set()),
    ("Put the pan down", set()),  # a past form the same as its lemma is no participle to tell
])
def test_a_verb_written_only_as_a_past_form_before_a_noun_is_a_state(nlp, text, states):
    (parse,) = parse_texts([text], nlp)
    assert set(parse.state_verbs) == states


def test_release_main_actions_named_as_a_state(real_tables):
    """On the 278 official rows one main action is a noun's state: "Scoop grinded coffee" parsed "grind coffee"."""
    actions = real_tables["action_narrations"]
    assert actions.loc[actions["state_action"], "narration_id"].tolist() == ["P08-20240613-122900-38"]
