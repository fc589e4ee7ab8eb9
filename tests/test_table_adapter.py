import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from boanon.adapters import available_adapters, get_adapter, ingest
from boanon.cli import main
from boanon.errors import LogParseError

ROOT = Path(__file__).resolve().parents[1]


def make_trial(root, name, params, metrics, objectives):
    d = root / name
    d.mkdir(parents=True)
    (d / "result.json").write_text(json.dumps(
        {"params": params, "metrics": metrics, "objectives": objectives}))
    return d


def test_result_json_trials_ingest_into_one_table(tmp_path):
    make_trial(tmp_path, "t0", {"x": 1, "mode": "fast"}, {"m": 2.0}, {"y": 3.0})
    make_trial(tmp_path, "t1", {"x": 2, "mode": "slow"}, {"m": 4.0, "extra": 1.0}, {"y": 5.0})
    result = ingest(tmp_path)
    assert result.adapter == "table"
    assert result.table["objective:y"].tolist() == [3.0, 5.0]
    assert result.table["param:mode"].tolist() == ["fast", "slow"]
    assert result.partially_missing == {"metric:extra": ["t0"]}
    assert "metric:extra: missing in 1 trial: t0" in result.summary()


def test_config_json_names_parameters_as_the_search_space(tmp_path):
    d = make_trial(tmp_path, "t0", {"x": 1}, {}, {"y": 1.0})
    (d / "config.json").write_text(json.dumps({"x": 7, "z": "a"}))
    table = ingest(tmp_path).table
    assert table.loc[0, "param:x"] == 7 and table.loc[0, "param:z"] == "a"


def test_bad_trial_raises_with_file_and_line_or_is_skipped(tmp_path):
    make_trial(tmp_path, "t0", {"x": 1}, {"m": 1.0}, {"y": 1.0})
    bad = tmp_path / "t1"
    bad.mkdir()
    (bad / "result.json").write_text('{"params": {"x": 1},\n "metrics": {"m": }\n}')
    with pytest.raises(LogParseError, match=r"t1/result.json:2: invalid JSON"):
        ingest(tmp_path)
    result = ingest(tmp_path, skip_bad=True)
    assert len(result.table) == 1
    assert result.skipped[0][0] == "t1" and "result.json:2" in result.skipped[0][1]
    non_numeric = make_trial(tmp_path / "other", "t0", {}, {"m": "fast"}, {})
    with pytest.raises(LogParseError, match="metric 'm' is not a number"):
        get_adapter("table").parse_trial(non_numeric)


def test_csv_with_prefixed_columns_and_jsonl_with_sidecar_roles(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text("trial,param:x,metric:m,objective:y\na,1,0.5,2\nb,2,,3\n")
    table = ingest(csv).table
    assert table["param:x"].tolist() == [1, 2]
    assert table["objective:y"].tolist() == [2.0, 3.0]
    jsonl = tmp_path / "runs.jsonl"
    jsonl.write_text('{"x": 1, "lat": 2.5, "thr": 10}\n\n{"x": 2, "lat": 3.5, "thr": 12}\n')
    (tmp_path / "runs.jsonl.roles.yaml").write_text(
        "params: [x]\nmetrics: [lat]\nobjectives: [thr]\n")
    table = ingest(jsonl).table
    assert table["trial"].tolist() == ["row-0000", "row-0001"]
    assert table["objective:thr"].tolist() == [10.0, 12.0]


def test_table_file_errors_name_the_line(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text("trial,param:x,objective:y\na,1,2\nb,2,fast\n")
    with pytest.raises(LogParseError, match=r"runs.csv:3: objective 'y' is not a number"):
        ingest(csv)
    csv.write_text("trial,param:x,objective:y\na,1,2\nb,2\n")  # last line cut short
    with pytest.raises(LogParseError, match=r"runs.csv:3: fewer fields than the header"):
        ingest(csv)
    unprefixed = tmp_path / "plain.csv"
    unprefixed.write_text("x,y\n1,2\n")
    with pytest.raises(LogParseError, match=r"plain.csv:1: column 'x' has no role"):
        ingest(unprefixed)
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text('{"param:x": 1}\n{"param:x": \n')
    with pytest.raises(LogParseError, match=r"bad.jsonl:2: invalid JSON"):
        ingest(jsonl)


def test_empty_or_unrecognised_directories_are_clear_errors(tmp_path):
    with pytest.raises(LogParseError, match="contains no trial sub-directories"):
        ingest(tmp_path)
    (tmp_path / "t0").mkdir()
    (tmp_path / "t0" / "notes.txt").write_text("hello")
    with pytest.raises(LogParseError, match="no adapter recognises these trials"):
        ingest(tmp_path)
    with pytest.raises(ValueError, match="unknown adapter 'nope'"):
        ingest(tmp_path, adapter="nope")
    assert "table" in available_adapters()


def test_a_missing_directory_is_said_to_be_missing(tmp_path):
    with pytest.raises(LogParseError, match=r"^.*/no/such/dir: does not exist$"):
        ingest(tmp_path / "no" / "such" / "dir")


def test_cli_ingest_prints_summary_and_writes_csv(tmp_path):
    make_trial(tmp_path / "logs", "t0", {"x": 1}, {"m": 2.0}, {"y": 3.0})
    out = tmp_path / "table.csv"
    res = CliRunner().invoke(main, ["ingest", str(tmp_path / "logs"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "trials:     1" in res.output and "objectives: 1" in res.output
    assert out.read_text().splitlines()[0] == "trial,param:x,metric:m,objective:y"
    bad = tmp_path / "logs" / "t1"
    bad.mkdir()
    (bad / "result.json").write_text("[1, 2]")
    res = CliRunner().invoke(main, ["ingest", str(tmp_path / "logs"), "--adapter", "table"])
    assert res.exit_code != 0 and "expected a JSON object" in res.output and "--skip-bad" in res.output
    res = CliRunner().invoke(main, ["ingest", str(tmp_path / "logs"), "--skip-bad"])
    assert res.exit_code == 0 and "skipped:    1" in res.output


def test_roles_sidecar_with_bad_yaml_or_shape_names_the_file(tmp_path):
    jsonl = tmp_path / "runs.jsonl"
    jsonl.write_text('{"x": 1, "thr": 10}\n')
    sidecar = tmp_path / "runs.jsonl.roles.yaml"
    sidecar.write_text("params: [x\n")
    with pytest.raises(ValueError, match=r"runs.jsonl.roles.yaml: line \d+: invalid YAML"):
        ingest(jsonl)
    sidecar.write_text("- x\n")
    with pytest.raises(LogParseError, match="runs.jsonl.roles.yaml: expected a mapping"):
        ingest(jsonl)


def _with_sidecar(tmp_path: Path, rows: str, roles: str) -> Path:
    """``roles.csv`` holding ``rows``, beside a ``roles.csv.roles.yaml`` holding ``roles``."""
    csv = tmp_path / "roles.csv"
    csv.write_text(rows)
    (tmp_path / "roles.csv.roles.yaml").write_text(roles)
    return csv


def test_a_misspelt_key_in_the_roles_sidecar_is_an_error_not_a_dropped_column(tmp_path):
    csv = _with_sidecar(tmp_path, "x,y\n1,2\n3,4\n", "params: [x]\nobjectivs: [y]\n")
    with pytest.raises(LogParseError, match=r"roles\.csv\.roles\.yaml: objectivs: unknown key "
                                            r"\(did you mean 'objectives'\?\); expected one of \["):
        ingest(csv)
    out = tmp_path / "out.csv"
    res = CliRunner().invoke(main, ["ingest", str(csv), "-o", str(out)])
    assert res.exit_code != 0 and "objectivs: unknown key" in res.output and not out.exists()


def test_a_column_the_roles_sidecar_leaves_out_is_an_error(tmp_path):
    csv = _with_sidecar(tmp_path, "x,y\n1,2\n", "params: [x]\n")
    with pytest.raises(LogParseError, match=r"roles\.csv:1: column 'y' has no role: .* "
                                            r"\(or list it under ignore:\) in roles\.csv\.roles\.yaml"):
        ingest(csv)


def test_a_jsonl_key_without_a_role_names_the_first_line_holding_it(tmp_path):
    jsonl = tmp_path / "runs.jsonl"  # it said runs.jsonl:1, a row without the key
    jsonl.write_text('{"param:x": 1, "objective:y": 2}\n\n{"param:x": 2, "objective:y": 3, "lat": 4}\n'
                     '{"lat": 5}\n')
    with pytest.raises(LogParseError, match=r"runs\.jsonl:3: column 'lat' has no role"):
        ingest(jsonl)


def test_the_roles_sidecar_leaves_out_what_it_lists_under_ignore(tmp_path):
    csv = _with_sidecar(tmp_path, "x,y,started_at\n1,2,2026-11-29T10:00\n3,4,2026-11-29T10:05\n",
                        "params: [x]\nobjectives: [y]\nignore: [started_at]\n")
    sidecar = tmp_path / "roles.csv.roles.yaml"
    assert ingest(csv).table.columns.tolist() == ["trial", "param:x", "objective:y"]
    sidecar.write_text("params: x\nobjectives: [y]\nignore: [started_at]\n")  # read one letter at a time
    with pytest.raises(LogParseError, match=r"roles\.csv\.roles\.yaml: params: expected a list of column "
                                            r"names, got 'x'"):
        ingest(csv)


def test_a_table_boanon_export_wrote_ingests_without_its_derived_pareto_column(tmp_path):
    exported = tmp_path / "export.csv"  # `boanon export` puts the flag second
    exported.write_text("trial,pareto,param:x,objective:y,objective:z\nt0,True,1,2.0,5.0\nt1,False,2,3.0,6.0\n")
    table = ingest(exported).table
    assert table.columns.tolist() == ["trial", "param:x", "objective:y", "objective:z"]
    assert table["objective:z"].tolist() == [5.0, 6.0]


@pytest.mark.parametrize(("roles", "first", "second"), [
    ("metrics: [queue_len, latency]\nobjectives: [latency]\n", "metrics", "objectives"),
    ("metrics: [queue_len]\nobjectives: [latency]\nignore: [latency]\n", "objectives", "ignore"),
])
def test_a_column_under_two_sections_of_the_roles_sidecar_is_an_error(tmp_path, roles, first, second):
    csv = _with_sidecar(tmp_path, "queue_len,latency\n3,12.5\n4,13.5\n", roles)  # one role was kept, unsaid
    with pytest.raises(LogParseError, match=rf"roles\.csv\.roles\.yaml: column 'latency' is listed under "
                                            rf"both {first} and {second}: a column has one role"):
        ingest(csv)


@pytest.mark.parametrize("name", ["LOG.gz", "stdout.txt", "config.json"])
def test_a_log_file_is_refused_as_no_table_naming_the_dataset_to_pass(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # read as a CSV, the real LOG.gz said ':6: more fields than the header'
    log = Path("datasets/rocksdb-readrandom/trial-000") / name
    said = (rf"{re.escape(str(log))}: not a table: a single file is read as a CSV/JSONL table "
            r"\(a name ending in \.csv/\.jsonl/\.ndjson, gzipped or not\); logs are read from the folder "
            r"holding the trial folders: pass datasets/rocksdb-readrandom \(trial-000 is one trial: the "
            r"'rocksdb' adapter recognises it\)")
    with pytest.raises(LogParseError, match=f"^{said}$"):
        ingest(log)
    res = CliRunner().invoke(main, ["ingest", str(log)])
    assert res.exit_code == 1 and re.search(said, res.output) and "--skip-bad" not in res.output


def test_a_log_file_outside_a_trial_is_refused_as_no_table(tmp_path):
    log = tmp_path / "LOG"
    log.write_bytes(gzip.decompress((ROOT / "datasets/rocksdb-readrandom/trial-000/LOG.gz").read_bytes()))
    with pytest.raises(LogParseError, match=r"LOG: not a table: .*; logs are read from the folder "
                                            r"holding the trial folders$"):
        ingest(log)


@pytest.mark.parametrize(("name", "rows"), [
    ("runs.csv.gz", "trial,param:x,objective:y\na,1,2\n"),
    ("runs.ndjson.gz", '{"trial": "a", "param:x": 1, "objective:y": 2}\n'),  # it was read as a CSV
])
def test_a_table_file_may_be_gzipped(tmp_path, name, rows):
    path = tmp_path / name
    path.write_bytes(gzip.compress(rows.encode()))
    assert ingest(path).table.to_dict("records") == [{"trial": "a", "param:x": 1, "objective:y": 2.0}]


@pytest.mark.parametrize("name, text, roles, error", [
    ("t.csv", "trial,param:x,param:x,objective:y\nt0,1,2,3\n", None,
     "t.csv:1: column 'param:x' appears twice in the header"),
    ("t.csv", "trial,x,param:x,objective:y\nt0,1,2,3\n", "params: [x]\n",
     "t.csv:1: columns 'x' and 'param:x' both hold 'x'"),
    ("t.csv", "trial,param:x,metric:x,objective:y\nt0,1,2,3\n", None,
     "t.csv:1: columns 'param:x' and 'metric:x' both hold 'x'"),
    ("t.jsonl", '{"param:x": 1, "param:x": 2, "objective:y": 3}\n', None,
     "t.jsonl:1: key 'param:x' appears twice in one object"),
])
def test_a_value_held_twice_in_a_table_is_an_error_not_the_last_one_kept(tmp_path, name, text, roles,
                                                                         error):
    path = tmp_path / name  # each row kept the last of the two values, unsaid (and learn lost x)
    path.write_text(text)
    if roles:
        (tmp_path / f"{name}.roles.yaml").write_text(roles)
    with pytest.raises(LogParseError) as err:
        ingest(path)
    assert str(err.value).startswith(f"{path.parent / error}"), str(err.value)


def test_a_metric_and_objective_of_one_name_are_still_one_quantity(tmp_path):
    path = tmp_path / "t.csv"  # a store's export may hold both: a result told two ways
    path.write_text("trial,param:x,metric:y,objective:y\nt0,1,2,\nt1,2,,3\n")
    assert ingest(path).table["param:x"].tolist() == [1, 2]


@pytest.mark.parametrize("result", [
    '{"params": {"x": 1, "x": 2}, "objectives": {"y": 2}}',
    '{"params": {"x": 1}, "metrics": {"x": 5}, "objectives": {"y": 2}}',
])
def test_a_trial_holding_a_value_twice_is_an_error_naming_it(tmp_path, result):
    (tmp_path / "t0").mkdir()
    (tmp_path / "t0" / "result.json").write_text(result)
    with pytest.raises(LogParseError, match=r"t0(/result\.json)?: .*'x'"):
        ingest(tmp_path)


@pytest.mark.parametrize("name, text", [
    ("t.csv", "trial,param:x,objective:y\r\nt0,1,3\r\nt1,2,4\r\n"),  # Excel's "CSV UTF-8"
    ("t.jsonl", '{"trial": "t0", "param:x": 1, "objective:y": 3}\n'
                '{"trial": "t1", "param:x": 2, "objective:y": 4}\n'),
])
def test_a_table_starting_with_a_byte_order_mark_reads_as_without_it(tmp_path, name, text):
    path = tmp_path / name  # it was a column '\ufefftrial' without a role, or invalid JSON
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    table = ingest(path).table
    assert list(table.columns) == ["trial", "param:x", "objective:y"]
    assert table["trial"].tolist() == ["t0", "t1"] and table["objective:y"].tolist() == [3.0, 4.0]


def test_a_result_json_starting_with_a_byte_order_mark_reads_as_without_it(tmp_path):
    d = make_trial(tmp_path, "t0", {"x": 1}, {}, {"y": 2.0})
    (d / "result.json").write_bytes(b"\xef\xbb\xbf" + (d / "result.json").read_bytes())
    assert ingest(tmp_path).table["objective:y"].tolist() == [2.0]


@pytest.mark.parametrize("name, text, line", [
    ("t.csv", "trial,param:x,objective:y\nt0,1,3\nt1,inf,4\n", 3),
    ("t.csv", "trial,param:x,objective:y\nt0,1,3\nt1,1e400,4\n", 3),
    ("t.jsonl", '{"param:x": 1, "objective:y": 3}\n{"param:x": 1e400, "objective:y": 4}\n', 2),
    ("t.jsonl", '{"param:x": 1, "objective:y": 3}\n{"param:x": 18446744073709551616, "objective:y": 4}\n', 2),
])
def test_a_parameter_beyond_a_finite_number_in_a_table_names_the_line(tmp_path, name, text, line):
    path = tmp_path / name  # it was read as inf, and learn found no edge of the parameter
    path.write_text(text)
    with pytest.raises(LogParseError, match=rf"^{re.escape(str(path))}:{line}: parameter 'x' is "):
        ingest(path)


def test_cli_ingest_to_a_dash_writes_the_table_to_standard_output(tmp_path, monkeypatch):
    make_trial(tmp_path / "logs", "t0", {"x": 1}, {"m": 2.0}, {"y": 3.0})
    monkeypatch.chdir(tmp_path)  # it wrote a file named '-' here, as no other command does
    res = CliRunner().invoke(main, ["ingest", "logs", "-o", "-"])
    assert res.exit_code == 0, res.output
    assert res.stdout == "trial,param:x,metric:m,objective:y\nt0,1,2.0,3.0\n"
    assert "trials:     1" in res.stderr
    assert not (tmp_path / "-").exists()


def test_spaces_around_a_csv_header_or_cell_are_no_part_of_it(tmp_path):
    path = tmp_path / "t.csv"  # "trial, param:x" was a column ' param:x' without a role
    path.write_text("trial, param:x, param:mode, objective:y\n t0, 1, fast, 3\nt1 ,2,fast ,4\n")
    table = ingest(path).table
    assert list(table.columns) == ["trial", "param:mode", "param:x", "objective:y"]
    assert table["trial"].tolist() == ["t0", "t1"] and table["param:mode"].tolist() == ["fast", "fast"]
    assert table["param:x"].tolist() == [1, 2] and table["objective:y"].tolist() == [3.0, 4.0]


def test_a_header_cell_without_a_name_is_named_by_its_position(tmp_path):
    path = tmp_path / "t.csv"  # a spreadsheet's trailing commas: it said "column '' has no role"
    path.write_text("trial,param:x,objective:y,,\nt0,1,3,,\n")
    with pytest.raises(LogParseError, match=r"t\.csv:1: column 4 has no name in the header "
                                            r"\(a trailing comma\?\)$"):
        ingest(path)
