"""How the tests are shared between pytest-xdist workers (``-n 2 --dist loadfile``).

A file's tests stay on one worker (``loadfile``), and the files that share a session fixture
(:data:`SHARED`: one real campaign each) stay on one worker together, so the fixture is built
once, not once per worker. Files are handed out longest first (:data:`WALL_S`, each file's wall
seconds in CI's per-file table, ``benchmarks/test_times.py``): the longest files do not start
last, when the other worker has nothing left to run (longest-processing-time-first list
scheduling; Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math. 17, 1969).
Files not in the table keep their collection order after the ones that are. The order changes
when tests run, never what they check: every test file is order-independent.
"""

from __future__ import annotations

from pathlib import Path

#: Session fixtures shared by several files (tests/conftest.py) -> the files that use them.
SHARED = {
    "small_real_campaign": ("test_attribution_integration.py", "test_campaign_integration.py",
                            "test_drilldown_integration.py",
                            "test_ratings_collect_browser_integration.py",
                            "test_ratings_summary_integration.py",
                            "test_report_browser_integration.py"),
    "real_serial_reference": ("test_executors_integration.py",
                              "test_kill_real_integration.py", "test_sweep_integration.py"),
}
_GROUP = {name: group for group, names in SHARED.items() for name in names}

#: Seconds per file on one core: max(wall, CPU) on this 2-core machine, the longest files
#: (``benchmarks/test_times.py``; stop 43's run of README command 2 on two pinned workers,
#: the scaffolded bot's file plus its longer call limit). Each worker runs on a core of its own
#: (tests/conftest.py), so a file's time there is about its CPU time, or its wall time where
#: it waits on real-time audio.
WALL_S = {
    "test_bot_scaffolded_integration.py": 423, "test_replay_integration.py": 395,
    "test_probes_integration.py": 192, "test_executors_integration.py": 172,
    "test_calls_concurrent_integration.py": 160, "test_scorer_integration.py": 145,
    "test_probes_bias_integration.py": 141, "test_kill_sweep_probe_integration.py": 115,
    "test_kill_campaign_integration.py": 96, "test_kill_real_integration.py": 92,
    "test_bot_inproc_integration.py": 86, "test_calls_loopback_integration.py": 86,
    "test_executors_unit.py": 84, "test_probe_languages_integration.py": 75,
    "test_attribution_integration.py": 73, "test_jobs_real_judge_integration.py": 71,
    "test_scorer_openai_integration.py": 69, "test_voices_record_browser_integration.py": 69,
    "test_runtime_integration.py": 66, "test_properties_stats_unit.py": 63,
    "test_agent_conversation_integration.py": 60, "test_score_sources_inproc_integration.py": 60,
    "test_demo_language_integration.py": 59, "test_jobs_ray_integration.py": 58,
    "test_sweep_integration.py": 53, "test_jobs_probe_unit.py": 51,
    "test_snr_wada_integration.py": 48, "test_delivery_integration.py": 45,
    "test_jobs_sweep_unit.py": 43, "test_bad_inputs_integration.py": 43,
    "test_score_sources_integration.py": 41, "test_campaign_unit.py": 38,
    "test_pace_pauses_integration.py": 37, "test_stats_simulation_unit.py": 37,
    "test_executors_ray_integration.py": 37, "test_properties_parsers_unit.py": 36,
    "test_executors_ray_nodes_integration.py": 36, "test_stages_integration.py": 34,
    "test_name_swap_languages_integration.py": 33, "test_services_load_integration.py": 30,
    "test_sweep_unit.py": 29, "test_calls_twilio_account_concurrent_integration.py": 28,
    "test_call_row_integration.py": 27, "test_synth_engines_integration.py": 27,
    "test_calls_multi_question_integration.py": 26, "test_replay_data_integration.py": 26,
    "test_replay_unit.py": 25, "test_scorer_validate_language_unit.py": 25,
    "test_bot_context_integration.py": 25, "test_monitor_integration.py": 24,
    "test_campaign_repeats_unit.py": 23, "test_score_sources_unit.py": 23,
    "test_calls_sip_integration.py": 23, "test_amx_guard_integration.py": 23,
    "test_kill_monitor_integration.py": 23, "test_profiles_core_integration.py": 23,
    "test_synth_kokoro_integration.py": 21,
}


def scope(path: str) -> str:
    """The unit of work a file belongs to: its session-fixture group, or the file itself."""
    return _GROUP.get(Path(path).name, path)


def _weight(scope_: str) -> int:
    names = SHARED.get(scope_, (Path(scope_).name,))
    return sum(WALL_S.get(n, 0) for n in names)


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the shared-fixture groups (:func:`scope`)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class _Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope(nodeid.split("::", 1)[0])

    config.option.loadscopereorder = False  # the order is the collection's (below)
    return _Scheduling(config, log)


def order_for_workers(config, items) -> None:
    """In an xdist worker, longest units first (a stable sort: within a unit and among the
    files not in :data:`WALL_S`, collection order)."""
    if not hasattr(config, "workerinput"):
        return
    weight = {}
    for item in items:
        s = scope(item.nodeid.split("::", 1)[0])
        weight.setdefault(s, (-_weight(s), len(weight)))
    items.sort(key=lambda i: weight[scope(i.nodeid.split("::", 1)[0])])
