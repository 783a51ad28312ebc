"""The command line's options: a single-valued option given twice is refused (argparse keeps the last silently),
`run` and `validate` take several connectors (`--config` repeated, `--config-dir`)."""

from __future__ import annotations

import json

import pytest

from sink_engine import cli
from sink_engine.cli_options import config_locations
from sink_engine.errors import OptionError


def _parsed(argv):
    return cli._parser().parse_args(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "--config", "a.json", "--config", "b.json"],
        ["verify", "--config", "a.json", "--topic", "t1", "--topic", "t2"],
        ["run", "--config", "a.json", "--worker", "w1.properties", "--worker", "w2.properties"],
        ["run", "--config-dir", "one", "--config-dir", "two"],
        ["dlq", "replay", "--config", "a.json", "--source-topic", "d1", "--source-topic", "d2"],
    ],
)
def test_a_single_valued_option_given_twice_is_refused_naming_it(argv, capsys):
    # given an option that takes one value, given twice; when the command line is parsed; then it exits 2 naming it
    with pytest.raises(SystemExit) as exit_:
        _parsed(argv)
    assert exit_.value.code == 2
    option = argv[-2]
    assert f"argument {option}: given more than once" in capsys.readouterr().err


def test_status_refused_two_configs_points_at_the_commands_that_take_several(capsys):
    with pytest.raises(SystemExit):
        _parsed(["status", "--config", "a.json", "--config", "b.json"])
    assert "run and validate take several" in capsys.readouterr().err


def test_repeatable_options_and_flags_take_every_value():
    # given options declared repeatable and a flag given twice; then each value is kept, the flag is set
    args = _parsed(
        ["dlq", "replay", "--config", "a.json", "--error-class", "A", "--error-class", "B", "--dry-run", "--dry-run"]
    )
    assert args.error_class == ["A", "B"] and args.dry_run


def test_run_takes_each_config_in_order_then_the_directorys_json_files_by_name(tmp_path):
    # given a directory with two connector files and another file; when run names a config and the directory
    folder = tmp_path / "connectors"
    folder.mkdir()
    for name in ("b.json", "a.json", "notes.txt"):
        (folder / name).write_text("{}")
    args = _parsed(["run", "--config", "z.json", "--config", "y.json", "--config-dir", str(folder)])
    # then the configs come first, in order, then the directory's *.json sorted
    assert config_locations(args) == ["z.json", "y.json", str(folder / "a.json"), str(folder / "b.json")]


@pytest.mark.parametrize(
    "argv, option, says",
    [
        (["run"], "--config", "give at least one connector"),
        (["run", "--config", "a.json", "--config", "a.json"], "--config", "a.json given more than once"),
        (["validate", "--config-dir", "{empty}"], "--config-dir", "holds no *.json file"),
        (["validate", "--config-dir", "{missing}"], "--config-dir", "is not a directory"),
    ],
)
def test_a_run_without_connectors_or_with_one_twice_is_refused(argv, option, says, tmp_path):
    (tmp_path / "empty").mkdir()
    argv = [a.format(empty=tmp_path / "empty", missing=tmp_path / "missing") for a in argv]
    with pytest.raises(OptionError) as refused:
        config_locations(_parsed(argv))
    assert refused.value.key == option and says in str(refused.value)


def _connector_file(folder, file: str, name: str, **overrides) -> str:
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": "t",
        "bootstrap.servers": "localhost:9",
        "s3.bucket.name": "lake",
        "s3.region": "us-east-1",
        "flush.size": "10",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        **overrides,
    }
    path = folder / file
    path.write_text(json.dumps({"name": name, "config": config}))
    return str(path)


def test_validate_shows_each_config_and_names_the_file_of_one_that_fails(tmp_path, capsys):
    # given three connector files, the second with a flush.size that is not a number
    good = _connector_file(tmp_path, "a.json", "first")
    bad = _connector_file(tmp_path, "b.json", "second", **{"flush.size": "ten"})
    other = _connector_file(tmp_path, "c.json", "third")
    # when validate is given all three
    code = cli.main(["validate", "--config-dir", str(tmp_path)])
    said = capsys.readouterr()
    # then each is shown under its file, the bad one named with its file and key, and the exit code is 2
    assert code == 2
    assert said.out.index(f"== {good}") < said.out.index(f"== {bad}") < said.out.index(f"== {other}")
    assert "connector first: " in said.out and "connector third: " in said.out and "connector second" not in said.out
    assert f"error: {bad}: config key 'flush.size'" in said.err


def test_two_files_naming_one_connector_are_refused(tmp_path, capsys):
    first, second = _connector_file(tmp_path, "a.json", "same"), _connector_file(tmp_path, "b.json", "same")
    assert cli.main(["validate", "--config", first, "--config", second]) == 2
    assert f"option --config: connector 'same' is named by {first} and {second}" in capsys.readouterr().err
