"""Which tests ``python -m pytest -m "not slow"`` (the README's quick subset) leaves out.

A test is slow when it takes seconds: a subprocess or a whole generate run per case, a sweep,
a killed process, a notebook kernel, the real release. Mark a new one with ``@pytest.mark.slow``
in its file, or list its module or test here (node id prefixes; chosen from ``--durations``).
"""

from __future__ import annotations

import pytest

SLOW = (
    "tests/test_real_release.py",
    "tests/test_explain.py::test_explained_question_is_the_one_generate_writes[multi_step_localization-debiased]",
    "tests/test_explain.py::test_excluded_target_states_its_reason",
    "tests/test_clients.py::test_keys_carry_the_dataset_and_a_fingerprint",
    "tests/test_clients.py::test_group_figure_is_the_mean_over_categories",
    "tests/test_clients.py::test_release_and_demo_keys_never_meet",
    "tests/test_run_record.py::test_merge_records_the_merged_file",
    "tests/test_export.py::test_exported_hooks_prompt_and_score",
    "tests/test_dialogue_review.py",
    "tests/test_launchers.py",
    "tests/test_image_nutrition_release.py",
    "tests/test_resume.py",
    "tests/test_hydra_sweeps.py",
    "tests/test_hydra_plugin.py",
    "tests/test_hydra_newcomer.py",
    "tests/test_golden.py",
    "tests/test_cli.py",
    "tests/test_view.py",
    "tests/test_derived.py::test_every_prototype_reads_only_the_tables_it_declares",
    "tests/test_dialogue.py::test_generate_on_the_demo_with_variants",
    "tests/test_export.py::test_lmms_eval_task_folder_on_our_output",
    "tests/test_render.py::test_a_config_may_name_its_own_template",
    "tests/test_render.py::test_a_hostile_user_template_stops_generate_with_one_located_line",
    "tests/test_nlp.py::test_cli_parses_a_csv_and_rejects_bad_rows",
    "tests/test_safe_pickle.py::test_generate_on_a_malicious_pickle_runs_nothing_and_says_why",
    "tests/test_fine_grained_prototypes.py::test_all_four_run_on_the_official_rows",
    "tests/test_run_record.py::test_a_sweep_records_every_output_and_a_later_run_merges",
    # the real release's checks, as the README says (each 1-5 s of CPU; the full suite runs them)
    "tests/test_quality_v2.py::test_following_activity_closer_tier_reaches_other_videos",
    "tests/test_balance.py::test_released_ingredient_weight_loses_its_smallest_number_shortcut",
    "tests/test_object_prototypes.py::test_published_p01_questions_are_reproduced",
    "tests/test_export.py::test_published_files_load_as_one_dataset",
    "tests/test_perception_prototypes.py::test_public_release_exits_2_with_one_line_and_no_output",
    # a whole benchmark (all 30 prototypes of hd_epic) on EPIC-KITCHENS-100 files: a whole-run check
    "tests/test_benchmark.py::test_a_benchmark_on_another_dataset_writes_what_it_can_and_lists_the_rest",
    # dialogue_qa's whole de-biased set again for another seed: seed 1 stays quick, seed 0 runs by the CLI (slow)
    "tests/test_dialogue_audit.py::test_every_heuristic_of_the_panel_at_most_25_percent[2]",
)


# The real annotation releases' checks, by the fixture that finds a release (README: the quick subset
# leaves them out; each loads release tables, seconds of CPU, and the full suite runs them).
REAL_DATA = {"real_root", "real_tables", "real_cc", "real_ek"}


def mark_slow(items) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW) or REAL_DATA & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
