"""Why recognition (Supp. D.1.4).

"What is the best description for why the person performed the action <verb noun> in video 1?"
Input: the narration's clip. Target: a narration with a why clause; <verb noun> is its main
action as parsed. Positive: the why clause. Negatives: why clauses of other narrations of the
same main action (verb and noun classes), at least 2 of them (else the target is skipped),
made up to 4 with why clauses of narrations sharing the main verb class; in both tiers a
clause whose verb/noun classes are a subset or superset of the positive's is left out.

True answers (``holds``): the why clause of any narration that lies in or overlaps the clip
("video 1" is the input clip) and whose main action has the asked verb and noun classes: the
same action done in the clip for that reason too.

The released questions say where their negatives came from in ``stat``: "true narrations"
(all four of the same main action) or "1 make up" / "2 make up" (that many from the same-verb
tier). The writer gives it for a finished question (``hdvqa.render.published``).

``params.fill_from_noun`` (on by default, as how_recognition's ``fill``) adds a last tier after
the paper's two: whys of narrations of the same noun class (another verb), same filter; it
matters only where the paper's tiers give fewer than 4 (annotations smaller than the release).
``params.min_same_action`` (default 2, the paper's) may be lowered.
"""

from __future__ import annotations

from hdvqa.engine import Prototype, Skip, param, rule_params

from .action_arrays import clause_arrays
from .common import ACTION_TABLES, class_masks, clause_candidates, clause_holds, clause_targets, time_writer

SAME_ACTION = "why of another narration of the same main action (verb and noun classes)"
SAME_VERB = "why of another narration of the same main verb class (make-up)"
SAME_NOUN = "why of another narration of the same main noun class (make-up, fill)"


@rule_params
class Params:
    min_same_action: int = param(2, low=0, high=4)
    fill_from_noun: bool = True


class WhyRecognition(Prototype):
    name = "why_recognition"
    category = "fine_grained"
    tables = ACTION_TABLES
    Params = Params

    def targets(self, tables):
        yield from clause_targets(tables["action_narrations"], "why", time_writer(tables))

    def negatives(self, target, tables, rng):
        clauses = clause_arrays(tables, "why")
        verb, noun = class_masks(clauses, target)
        least = self.params.min_same_action
        tiers = [(SAME_ACTION, verb & noun), (SAME_VERB, verb & ~noun)] + ([(SAME_NOUN, noun & ~verb)] if self.params.fill_from_noun else [])
        seen, same_action = {" ".join(target.positive.value.split())}, 0
        for tier, choice in clause_candidates(clauses, target, "why", tiers, rng):
            text = " ".join(choice.value.split())
            if text in seen:  # counted once, as the engine keeps it once
                continue
            seen.add(text)
            if tier > 0 and same_action < least:
                raise Skip(f"fewer than {least} whys of the same main action")
            same_action += tier == 0
            yield choice
        if same_action < least:
            raise Skip(f"fewer than {least} whys of the same main action")

    def holds(self, target, value, tables) -> bool:
        """The question asks why the action <verb noun> was done in video 1 (the clip): the why
        clause of any narration of that action in the clip answers it (``data.true``)."""
        return clause_holds(target, value)
