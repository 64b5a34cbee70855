"""Test tiers (docs/how-to/develop.md): every test is in the fast tier unless it is marked `peer`.

`peer` means the test needs a process, a peer or the network stack (loopback included): a subprocess,
a real server, a socket on AF_INET/AF_INET6, a wheel. Whole areas are `peer` by their path
(PEER_PATHS); elsewhere a module says `pytestmark = pytest.mark.peer` (or a test `@pytest.mark.peer`).

`pytest --tier=fast` (`make test-fast`) runs only unmarked tests and guards them: a test that starts a
process or touches the network stack fails there, naming the marker it needs. So a test lands in the
fast tier by default and cannot stay there by mistake.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.support import ROOT

# Areas whose every test runs a peer: real servers, the npm harness, wheels built and installed.
PEER_PATHS = (
    "tests/auth/",
    "tests/cluster/",
    "tests/conformance/",
    "tests/hostile/",
    "tests/interop/",
    "tests/test_bench_smoke.py",
    "tests/test_distributions.py",
    "tests/test_installed_wheel.py",
    "tests/test_large_wheel.py",
    "tests/test_precommit.py",
    "tests/test_project_wheel.py",
    "tests/test_readme_user_path.py",
    # modules most of whose tests run servers, peers or generated projects' type checkers
    "tests/codegen/cli/test_generate_check.py",
    "tests/codegen/cli/test_generate_project.py",
    "tests/codegen/cli/test_handlers_drift.py",
    "tests/codegen/cli/test_interrupt.py",
    "tests/codegen/cli/test_package_names.py",
    "tests/codegen/cli/test_quiet.py",
    "tests/codegen/cli/test_tool_filters.py",
    "tests/codegen/cli/test_rename_warnings.py",
    "tests/codegen/cli/test_skip_invalid.py",
    "tests/codegen/diff/test_diff_against.py",
    "tests/codegen/pipeline/test_ecma_patterns.py",
    "tests/codegen/pipeline/test_generate.py",
    "tests/codegen/pipeline/test_generate_edges.py",
    "tests/codegen/pipeline/test_generate_hostile.py",
    "tests/codegen/pipeline/test_generate_hostile_server_surfaces.py",
    "tests/codegen/pipeline/test_generate_hostile_surfaces.py",
    "tests/codegen/pipeline/test_generate_lazy.py",
    "tests/codegen/pipeline/test_generate_scale.py",
    "tests/codegen/pipeline/test_generate_shapes.py",
    "tests/codegen/pipeline/test_generate_typecheck.py",
    "tests/codegen/pipeline/test_typed_calls.py",
    "tests/codegen/pipeline/test_validate_and_model.py",
    "tests/codegen/render/test_server_surfaces.py",
    "tests/codegen/test_parallel.py",
    "tests/golden/test_golden.py",
    "tests/runtime/client/test_client_drift.py",
    "tests/runtime/client/test_tool_specs.py",
    "tests/runtime/server/tasks/",
    "tests/runtime/cli/test_cli_config.py",
    "tests/runtime/cli/test_cli_conformance.py",
    "tests/runtime/cli/test_cli_input.py",
    "tests/runtime/cli/test_cli_options.py",
    "tests/runtime/cli/test_cli_progress.py",
    "tests/runtime/cli/test_weather_cli.py",
    "tests/runtime/client/test_client_auth_retries.py",
    "tests/runtime/client/test_client_legacy_flows.py",
    "tests/runtime/client/test_client_listen.py",
    "tests/runtime/client/test_client_progress_cancel.py",
    "tests/runtime/client/test_client_progress_deadline.py",
    "tests/runtime/client/test_client_retries.py",
    "tests/runtime/client/test_client_sdk_peer.py",
    "tests/runtime/client/test_client_slow_start.py",
    "tests/runtime/client/test_client_wire.py",
    "tests/runtime/mock/test_faults.py",
    "tests/runtime/mock/test_mock_server.py",
    "tests/runtime/mock/test_mock_surfaces.py",
    "tests/runtime/mock/test_record_replay.py",
    "tests/runtime/server/http/test_app.py",
    "tests/runtime/server/http/test_deploy.py",
    "tests/runtime/server/legacy/test_http.py",
    "tests/runtime/server/legacy/test_stdio.py",
    "tests/runtime/server/store/test_replica_sessions.py",
    "tests/runtime/server/store/test_replicas.py",
    "tests/runtime/server/store/test_replicas_surfaces.py",
    "tests/runtime/server/store/test_store_differential.py",
    "tests/runtime/server/store/test_store_startup.py",
    "tests/runtime/server/test_sdk_interop.py",
    "tests/runtime/server/test_serve_by_hand.py",
    "tests/runtime/server/test_startup.py",
    "tests/runtime/server/test_stdio.py",
    "tests/runtime/telemetry/test_otel.py",
    "tests/runtime/telemetry/test_otel_canary.py",
    "tests/runtime/telemetry/test_otel_environment.py",
    "tests/runtime/telemetry/test_otel_sdk_peer.py",
    "tests/runtime/telemetry/test_otel_sessions.py",
    "tests/runtime/transport/test_hostile_server.py",
    "tests/runtime/transport/test_http11_servers.py",
    "tests/runtime/transport/test_stdio_banner.py",
    "tests/runtime/transport/test_transport_peer_requests.py",
)

# Single tests that need a peer in modules of mostly fast tests (by function name: every parameter).
PEER_TESTS: dict[str, set[str]] = {
    "tests/codegen/model/test_reserved.py": {
        "test_a_fresh_process_reads_the_file_instead_of_importing_the_runtime"
    },
    "tests/runtime/mock/test_pytest_plugin.py": {"test_a_users_test_suite_with_the_fixture"},
    "tests/runtime/cli/test_cli_surfaces.py": {"test_an_unreachable_server_is_exit_3"},
    "tests/runtime/client/test_client_mrtr.py": {
        "test_our_server_every_input_kind_and_multi_round",
        "test_sdk_async_callbacks_and_parallel_calls_mrtr20",
        "test_sdk_elicitation_answered_by_callback",
        "test_sdk_generated_method_path_drives_the_loop",
        "test_sdk_round_cap",
        "test_sdk_stdio_every_path",
        "test_sdk_three_kinds_in_one_round_and_two_rounds",
        "test_sdk_without_callback_resume_by_hand",
    },
    "tests/codegen/render/test_deploy.py": {
        "test_dockerfile_installs_the_runtime_from_wheels_and_serves",
        "test_written_once_then_the_users",
    },
    "tests/runtime/mock/test_values.py": {
        "test_values_do_not_depend_on_the_literals_in_the_users_code",
        "test_values_do_not_depend_on_the_process_or_its_hash_seed",
    },
    "tests/runtime/test_ecma_regex.py": {
        "test_corpus_is_large_and_covers_both_verdicts",
        "test_realworld_patterns_all_valid",
        "test_same_verdicts_and_matches_as_node",
    },
    "tests/runtime/mock/test_mock_cli.py": {
        "test_a_mock_process_keeps_hypothesis_files_out_of_the_folder_it_runs_in",
        "test_runtime_mock_help_and_usage_errors",
        "test_without_the_mock_extra_it_says_what_to_install",
    },
    "tests/test_rules.py": {
        "test_conformance_section_references_resolve",
        "test_every_cited_rule_id_is_defined",
        "test_no_citation_of_files_outside_the_repository",
    },
    "tests/runtime/telemetry/test_otel_limits.py": {
        "test_captured_arguments_are_cut_and_secrets_masked",
        "test_long_method_name_is_cut_in_name_and_status",
        "test_long_uri_method_and_id_are_cut",
        "test_masked_on_the_client_span_too",
    },
    "tests/codegen/cli/test_mcp_config_cli.py": {
        "test_a_target_reading_a_config_files_server",
        "test_client_all_generates_every_enabled_server_and_reports_the_failing_one",
        "test_one_server_by_name_and_by_file_hash_name",
        "test_the_server_runs_in_the_project_of_its_file",
    },
    "tests/codegen/render/test_black_layout.py": {
        "test_code_does_not_depend_on_keyword_order",
        "test_small_specs",
    },
    "tests/runtime/transport/test_http11.py": {
        "test_abandoned_sse_stream_closes_the_connection",
        "test_async_cancellation_drops_the_connection",
        "test_async_pool_concurrent_requests",
        "test_async_pool_survives_a_new_event_loop",
        "test_chunked_close_delimited_and_interim_replies",
        "test_closing_a_reply_whose_end_has_arrived_keeps_the_connection",
        "test_failure_after_a_response_byte_is_not_retried",
        "test_fresh_connection_dying_is_not_retried",
        "test_header_injection_never_reaches_the_wire",
        "test_https_untrusted_certificate_is_connect_error",
        "test_https_verified_keep_alive",
        "test_idle_connection_closed_by_server_is_replaced",
        "test_keep_alive_reuses_one_connection",
        "test_malformed_chunk_mid_body_fails_and_drops_the_connection",
        "test_no_reply_is_request_timeout_and_connection_dropped",
        "test_non_2xx_json_rpc_error_and_plain_error",
        "test_nothing_listening_is_connect_error",
        "test_notify_accepts_202_and_keeps_the_connection",
        "test_reused_connection_dying_before_any_byte_is_retried_once",
        "test_sse_is_streamed_incrementally",
        "test_sync_pool_is_thread_safe",
        "test_timeout_bounds_a_trickling_body",
        "test_truncated_body_is_transport_error",
    },
    "tests/runtime/server/core/test_security.py": {
        "test_malformed_authorization_is_401",
        "test_missing_or_invalid_token_is_401",
        "test_principal_reaches_the_handler_and_binds_state_mrtr08",
        "test_rate_limit_is_per_principal_over_http",
    },
    "tests/runtime/server/core/test_subscriptions.py": {
        "test_disconnect_cancels_any_handler_http21_cancel02",
        "test_listen_needs_sse_accept",
        "test_listen_over_http_streams_sse_http18_http19",
        "test_listen_over_stdio_tags_and_cancels_stdio07_sub08_sub10",
        "test_shutdown_ends_listen_streams_gracefully_sub07",
        "test_stdio_batch_is_an_error_and_the_loop_goes_on",
    },
    "tests/codegen/pipeline/test_generate_odd_input.py": {
        "test_long_description_is_accepted_and_generated",
        "test_shared_and_recursive_definitions_are_not_fan_out",
        "test_unusable_number_is_dropped_and_the_tool_kept",
    },
    "tests/codegen/cli/test_client_project.py": {
        "test_a_pyproject_without_the_generated_header_is_never_overwritten",
        "test_a_removed_marker_or_invalid_toml_in_a_user_section_writes_nothing",
        "test_an_edit_of_a_generated_line_is_stale_and_undone",
        "test_hostile_server_info_is_ignored_when_the_flags_say_otherwise",
        "test_name_and_version_from_the_saved_server_info_or_the_flags",
        "test_project_layout_metadata_and_script",
        "test_user_sections_survive_regeneration_byte_for_byte",
    },
    "tests/codegen/cli/test_cli.py": {
        "test_console_script_end_to_end",
        "test_generate_reports_each_failing_target",
        "test_generate_then_check",
        "test_generator_commands_run_as_a_program_without_the_cycle_collector",
        "test_real_client_and_server",
        "test_real_generate_then_check_is_fresh",
        "test_real_snapshot_over_stdio",
    },
    "tests/codegen/load/test_load.py": {
        "test_load_stdio_missing_program",
        "test_load_stdio_real_transport_keeps_invalid_tools",
        "test_load_stdio_server_that_exits",
        "test_load_url_connection_refused_is_a_load_error",
        "test_load_url_real_transport_keeps_invalid_tools",
        "test_load_url_real_transport_warns_about_nothing",
        "test_reading_a_file_does_not_import_the_client",
    },
    "tests/runtime/client/test_client_cache.py": {
        "test_cache_can_be_turned_off",
        "test_custom_store_is_used",
        "test_generated_client_second_listing_sends_no_request",
        "test_private_results_are_per_token_public_ones_shared_cache13",
        "test_sdk_caching_hints_are_honoured",
        "test_stale_listing_served_when_the_server_is_gone",
        "test_static_headers_partition_private_entries_across_clients_sharing_a_store",
    },
}

# Tests that assert latency or memory bounds measured on an idle 2-core machine, and the cluster (one
# nginx, redis and replicas for the package, intermittently failing under load): `serial`, run by
# `make test` after the parallel run, alone in one process. Elsewhere `@pytest.mark.serial`.
SERIAL_PATHS = (
    "tests/cluster/",
    "tests/hostile/",
    "tests/codegen/pipeline/test_generate_scale.py",
    "tests/runtime/server/http/test_deploy.py",
    "tests/runtime/transport/test_hostile_server.py",
)

# Single tests that failed in a full run on 4 workers under load (load average 7-10 on 2 cores): a 2 s
# bound, pyright's 120 s, and two mock runs whose answers or handshake changed with the delays.
SERIAL_TESTS: dict[str, set[str]] = {
    "tests/codegen/validate/test_validate.py": {"test_huge_fan_out_fails_fast"},
    "tests/codegen/pipeline/test_generate_typecheck.py": {"test_pyright_strict"},
    "tests/runtime/mock/test_mock_server.py": {
        "test_the_same_seed_gives_the_same_answers_in_every_process_and_transport"
    },
    "tests/runtime/mock/test_record_replay.py": {
        "test_a_modern_server_recorded_over_http_and_stdio_replays",
        # two recordings of server-everything compared byte for byte: under load a session can last
        # past 5 s, and then it carries the log message the server sends every 5 s at a random level
        "test_server_everything_recorded_over_stdio_replays_to_both_clients",
    },
}


def add_option(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        choices=("all", "fast"),
        default="all",
        help="fast: only tests not marked `peer`, and fail any of them that starts a process or a socket",
    )


def mark(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks from paths; in the fast tier, deselect `peer` tests."""
    fast: list[pytest.Item] = []
    peers: list[pytest.Item] = []
    for item in items:
        path = item.path.relative_to(ROOT).as_posix()
        name = getattr(item, "originalname", item.name)
        if path.startswith(PEER_PATHS) or name in PEER_TESTS.get(path, ()):
            item.add_marker(pytest.mark.peer)
        if path.startswith(SERIAL_PATHS) or name in SERIAL_TESTS.get(path, ()):
            item.add_marker(pytest.mark.serial)
        # --dist loadgroup: serial tests together even when run on workers; a module's peer tests on
        # one worker (its module-scoped servers start once); fast tests spread one by one
        group = None
        if item.get_closest_marker("serial") is not None:
            group = "serial"
        elif item.get_closest_marker("peer") is not None:
            group = path
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
        (peers if item.get_closest_marker("peer") else fast).append(item)
    if config.getoption("tier") == "fast":
        config.hook.pytest_deselected(items=peers)
        items[:] = fast


class PeerInFastTier(AssertionError):
    pass


_NETWORK = (socket.AF_INET, socket.AF_INET6)


# What the guard refused during the current test, even where the test (or a thread) swallowed it.
refused: list[str] = []


def message(what: str) -> str:
    return (
        f"this test {what}: mark it `@pytest.mark.peer` (or its module `pytestmark = pytest.mark.peer`); "
        "the fast tier has no process, peer or network stack (docs/how-to/develop.md: Test tiers)"
    )


def _refuse(what: str) -> None:
    refused.append(what)
    raise PeerInFastTier(message(what))


@contextmanager
def guarded() -> Iterator[None]:
    """Processes and AF_INET sockets refused while a fast-tier test sets up and runs."""
    originals: dict[tuple[Any, str], Callable[..., Any]] = {}

    def patch(owner: Any, name: str, replacement: Callable[..., Any]) -> None:
        originals[(owner, name)] = getattr(owner, name)
        setattr(owner, name, replacement)

    def execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        _refuse(f"starts a process ({args!r})")

    def socket_call(name: str) -> Callable[..., Any]:
        original = getattr(socket.socket, name)

        def call(self: socket.socket, *args: Any) -> Any:
            if self.family in _NETWORK:
                _refuse(f"calls socket.{name}{args!r} on the network stack")
            return original(self, *args)

        return call

    def fork() -> int:
        _refuse("forks a process")
        return 0

    patch(subprocess.Popen, "_execute_child", execute_child)
    for name in ("connect", "connect_ex", "bind"):
        patch(socket.socket, name, socket_call(name))
    patch(os, "fork", fork)
    try:
        yield
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)


def is_guarded(item: pytest.Item) -> bool:
    return item.config.getoption("tier") == "fast" and item.get_closest_marker("peer") is None
