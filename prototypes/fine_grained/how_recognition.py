"""How recognition (Supp. D.1.4).

"What is the best description for how the person carried out the action <verb noun> in this
video segment?" Input: the narration's clip (its start and end). Target: a narration with a
how clause; <verb noun> is its main action as parsed. Positive: the how clause. Negatives:
how clauses of other narrations whose main action has the same verb class and noun class,
leaving out any whose clause's verb/noun classes are a subset or superset of the positive's
(they could describe it too). The paper's manual filtering that followed is not reproduced.
The how clause is the manner alone: a purpose the parser left inside it ("by pulling the door
to make room") is the narration's why clause, and is cut off (``action_narrations``).

True answers (``holds``): the how clause of any narration of the video that lies in or overlaps
the clip and whose main action has the asked verb and noun classes (the same action done so
during "this video segment"), not only the target narration's.

``params.fill`` (on by default): after the paper's tier, negatives may come from narrations of
the same verb class (another noun), then of the same noun class (another verb), same filter.
The paper drew from all 59,454 narrations; on less (one participant's parsed narrations, another
dataset) the same verb and noun classes rarely give 4 clauses that do not nest with the answer,
and the paper's rule alone loses most questions (8 of the 11 P01 dev questions; docs/conformance.md).
The hardest negatives still come first; ``fill=false`` is the paper's rule alone.
"""

from __future__ import annotations

from hdvqa.engine import Prototype, rule_params

from .action_arrays import clause_arrays
from .common import ACTION_TABLES, class_masks, clause_candidates, clause_holds, clause_targets, time_writer


SAME_ACTION = "how of another narration of the same verb and noun classes"
SAME_VERB = "how of another narration of the same verb class (fill)"
SAME_NOUN = "how of another narration of the same noun class (fill)"


@rule_params
class Params:
    fill: bool = True


class HowRecognition(Prototype):
    name = "how_recognition"
    category = "fine_grained"
    tables = ACTION_TABLES
    Params = Params

    def targets(self, tables):
        yield from clause_targets(tables["action_narrations"], "how", time_writer(tables))

    def negatives(self, target, tables, rng):
        clauses = clause_arrays(tables, "how")
        verb, noun = class_masks(clauses, target)
        tiers = [(SAME_ACTION, verb & noun)] + ([(SAME_VERB, verb & ~noun), (SAME_NOUN, noun & ~verb)] if self.params.fill else [])
        for _, choice in clause_candidates(clauses, target, "how", tiers, rng):
            yield choice

    def holds(self, target, value, tables) -> bool:
        """The question asks how the action <verb noun> was done in the clip: a how clause of any
        narration of that action in the clip answers it (precomputed in ``data.true``)."""
        return clause_holds(target, value)
