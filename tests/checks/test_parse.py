"""Loading tests: schema validation, normalisation, round trip, errors naming the input."""

import json

import pytest

from minuscule.checks import CheckResult, load_tests, parse_test
from minuscule.errors import InputError

BASE = {"pdf": "a/b.pdf", "page": 1, "id": "t1"}


def test_every_type_parses_and_round_trips():
    records = [
        {**BASE, "type": "present", "text": "x  **y**", "case_sensitive": False, "first_n": None, "last_n": 10,
         "max_diffs": 1, "checked": "verified", "url": "https://e.x"},
        {**BASE, "type": "absent", "text": "footer"},
        {**BASE, "type": "order", "before": "first", "after": "second"},
        {**BASE, "type": "table", "cell": "1", "up": "h", "top_heading": "H", "ignore_markdown_tables": True},
        {**BASE, "type": "math", "math": "a+b"},
        {**BASE, "type": "baseline", "max_length": 10},
    ]
    for rec in records:
        test = parse_test(rec)
        assert (test.id, test.type, test.pdf, test.page) == ("t1", rec["type"], "a/b.pdf", 1)
        assert test.to_json() == rec
        assert test.key == ("a/b.pdf", 1)
    present = parse_test(records[0])
    assert present.text == "x y"  # normalised at load, like the scorer
    assert present.to_json()["text"] == "x  **y**"


def test_check_result_is_frozen():
    r = CheckResult(True, "")
    with pytest.raises(AttributeError):
        r.passed = False  # type: ignore[misc]


@pytest.mark.parametrize(
    "record, words",
    [
        ({**BASE, "type": "present", "text": "x", "threshold": 0.9}, "unknown field"),
        ({**BASE, "type": "present"}, "missing field"),
        ({"page": 1, "id": "t", "type": "absent", "text": "x"}, "missing field"),
        ({**BASE, "type": "present", "text": "  "}, "empty"),
        ({**BASE, "type": "present", "text": "**"}, "empty"),
        ({**BASE, "type": "order", "before": "abcd", "after": "efgh", "max_diffs": 3}, "half"),
        ({**BASE, "type": "present", "text": "x", "max_diffs": -1}, "max_diffs"),
        ({**BASE, "type": "present", "text": "x", "page": "1"}, "page"),
        ({**BASE, "type": "wobble"}, "unknown test type"),
        ({**BASE, "type": "format", "text": "x", "format": "bold"}, "not supported"),
        ({**BASE, "type": "math", "math": " "}, "empty"),
        ({**BASE, "type": "table", "cell": 3}, "string"),
        ({**BASE, "type": "baseline", "max_repeats": "many"}, "integer"),
    ],
)
def test_invalid_records_raise_input_error(record, words):
    with pytest.raises(InputError) as err:
        parse_test(record)
    assert words in str(err.value)
    assert "t" in err.value.source


def test_null_table_relations_mean_not_asked():
    t = parse_test({**BASE, "type": "table", "cell": "x", "up": None})
    assert t.up == ""


def test_load_tests_names_file_and_line(tmp_path):
    good = {**BASE, "type": "absent", "text": "x"}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "id": "t2"}) + "\n")
    assert [t.id for t in load_tests(path)] == ["t1", "t2"]

    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(InputError, match="duplicate"):
        load_tests(path)
    path.write_text(json.dumps(good) + "\n{oops\n")
    with pytest.raises(InputError) as err:
        load_tests(path)
    assert err.value.source.endswith("t.jsonl:2")
    with pytest.raises(InputError, match="t.jsonl:1"):
        path.write_text(json.dumps({**good, "type": "present", "text": ""}) + "\n")
        load_tests(path)
    with pytest.raises(InputError):
        load_tests(tmp_path / "missing.jsonl")
